#include "daemon/llm/sse_parser.h"

#include <limits>
#include <utility>

#include "common/utf8.h"
#include "daemon/llm/error_text.h"

namespace agent::daemon::llm {
namespace {

constexpr unsigned char kBom[3] = {0xEF, 0xBB, 0xBF};

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

void SseParser::Overflow() {
  status_ = CapExceededError("a server-sent event line or event", options_.max_event_bytes,
                             "kMaxSseEventBytes");
  line_.clear();
  line_.shrink_to_fit();
  data_.clear();
  data_.shrink_to_fit();
  event_.clear();
  has_fields_ = false;
}

void SseParser::Feed(std::string_view bytes, std::vector<SseEvent>* out) {
  if (!status_.ok()) return;
  size_t i = 0;
  if (!bom_done_) {
    // The BOM may itself be split over several Feeds: match it byte by byte.
    while (i < bytes.size() && bom_matched_ < 3 &&
           static_cast<unsigned char>(bytes[i]) == kBom[bom_matched_]) {
      ++bom_matched_;
      ++i;
    }
    if (bom_matched_ == 3) {
      bom_done_ = true;
    } else if (i < bytes.size()) {
      // Not a BOM after all: the bytes matched so far are ordinary line bytes.
      line_.append(reinterpret_cast<const char*>(kBom), bom_matched_);
      bom_done_ = true;
    } else {
      return;  // everything so far could still be the start of a BOM
    }
  }

  while (i < bytes.size() && status_.ok()) {
    if (pending_cr_) {
      pending_cr_ = false;
      if (bytes[i] == '\n') {
        ++i;
        continue;
      }
    }
    const size_t end = bytes.find_first_of("\r\n", i);
    if (end == std::string_view::npos) {
      if (line_.size() + (bytes.size() - i) > options_.max_event_bytes) {
        Overflow();
        return;
      }
      line_.append(bytes.substr(i));
      return;
    }
    if (line_.empty()) {
      // Common case: the whole line is inside this Feed; no copy.
      ProcessLine(bytes.substr(i, end - i), out);
    } else {
      line_.append(bytes.substr(i, end - i));
      ProcessLine(line_, out);
      line_.clear();
    }
    if (bytes[end] == '\r') {
      if (end + 1 < bytes.size()) {
        i = (bytes[end + 1] == '\n') ? end + 2 : end + 1;
      } else {
        pending_cr_ = true;  // the LF, if any, comes in the next Feed
        i = end + 1;
      }
    } else {
      i = end + 1;
    }
  }
}

void SseParser::Finish(std::vector<SseEvent>* out) {
  if (finished_) return;
  partial_at_finish_ = PendingNow();
  finished_ = true;
  if (!options_.dispatch_unterminated_at_end || !status_.ok()) return;
  if (!bom_done_ && bom_matched_ > 0) {
    line_.append(reinterpret_cast<const char*>(kBom), bom_matched_);
  }
  if (!line_.empty()) {
    std::string line = std::move(line_);
    line_.clear();
    ProcessLine(line, out);
  }
  Dispatch(out);
}

bool SseParser::HasPartialEvent() const { return finished_ ? partial_at_finish_ : PendingNow(); }

bool SseParser::PendingNow() const {
  if (has_fields_) return true;
  if (!bom_done_ && bom_matched_ > 0) return true;
  return !line_.empty() && line_[0] != ':';
}

void SseParser::ProcessLine(std::string_view line, std::vector<SseEvent>* out) {
  if (line.size() > options_.max_event_bytes) {
    Overflow();
    return;
  }
  if (line.empty()) {
    Dispatch(out);
    return;
  }
  if (line[0] == ':') return;  // comment, e.g. ": keep-alive"

  std::string_view name = line;
  std::string_view value;
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    name = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);  // exactly one space
  }

  if (name == "data") {
    if (data_.size() + value.size() + 1 > options_.max_event_bytes) {
      Overflow();
      return;
    }
    data_.append(value);
    data_.push_back('\n');
    has_fields_ = true;
  } else if (name == "event") {
    event_.assign(value);
    has_fields_ = true;
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) {
      last_id_.assign(value);
      MakeValidUtf8(&last_id_);
    }
  } else if (name == "retry") {
    if (AllDigits(value)) {
      int64_t ms = 0;
      for (char c : value) {
        if (ms > (std::numeric_limits<int64_t>::max() - 9) / 10) {
          ms = std::numeric_limits<int64_t>::max();  // saturate instead of overflowing
          break;
        }
        ms = ms * 10 + (c - '0');
      }
      retry_ms_ = ms;
    }
  }
  // Any other field name is ignored, as the spec says.
}

void SseParser::Dispatch(std::vector<SseEvent>* out) {
  has_fields_ = false;
  if (!data_.empty() && data_.back() == '\n') data_.pop_back();
  if (data_.empty()) {
    // Spec: no data, no event. We also drop events whose data is empty (see the header).
    event_.clear();
    return;
  }
  SseEvent ev;
  ev.event = std::move(event_);
  ev.data = std::move(data_);
  ev.id = last_id_;
  // The one place where the stream's bytes become text (see the header).
  MakeValidUtf8(&ev.event);
  MakeValidUtf8(&ev.data);
  out->push_back(std::move(ev));
  event_.clear();
  data_.clear();
}

}  // namespace agent::daemon::llm
