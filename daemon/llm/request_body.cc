#include "daemon/llm/request_body.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace agent::daemon::llm {

void RequestBody::Append(std::string text) {
  if (text.empty()) return;
  auto owned = std::make_shared<const std::string>(std::move(text));
  const std::string_view view(*owned);
  Append(std::move(owned), view);
}

void RequestBody::Append(std::shared_ptr<const void> owner, std::string_view view) {
  if (view.empty()) return;
  size_ += view.size();
  // Consecutive views of one owner's contiguous text stay one piece.
  if (!pieces_.empty()) {
    Piece& last = pieces_.back();
    if (last.owner == owner && last.view.data() + last.view.size() == view.data()) {
      last.view = std::string_view(last.view.data(), last.view.size() + view.size());
      return;
    }
  }
  pieces_.push_back({std::move(owner), view});
}

void RequestBody::Append(const RequestBody& other) {
  for (const Piece& p : other.pieces_) Append(p.owner, p.view);
}

void RequestBody::Insert(size_t at, std::string text) {
  if (text.empty()) return;
  at = std::min(at, size_);
  size_t start = 0;
  size_t i = 0;
  while (i < pieces_.size() && start + pieces_[i].view.size() <= at) {
    start += pieces_[i].view.size();
    ++i;
  }
  auto owned = std::make_shared<const std::string>(std::move(text));
  Piece inserted{owned, std::string_view(*owned)};
  size_ += inserted.view.size();
  if (i == pieces_.size() || at == start) {
    pieces_.insert(pieces_.begin() + static_cast<std::ptrdiff_t>(i), std::move(inserted));
    return;
  }
  // Split piece i at `at`.
  Piece tail = pieces_[i];
  const size_t cut = at - start;
  pieces_[i].view = pieces_[i].view.substr(0, cut);
  tail.view = tail.view.substr(cut);
  pieces_.insert(pieces_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                 {std::move(inserted), std::move(tail)});
}

void RequestBody::Truncate(size_t n) {
  if (n >= size_) return;
  size_t start = 0;
  size_t i = 0;
  while (i < pieces_.size() && start + pieces_[i].view.size() <= n) {
    start += pieces_[i].view.size();
    ++i;
  }
  if (i < pieces_.size() && n > start) {
    pieces_[i].view = pieces_[i].view.substr(0, n - start);
    ++i;
  }
  pieces_.erase(pieces_.begin() + static_cast<std::ptrdiff_t>(i), pieces_.end());
  size_ = n;
}

std::string RequestBody::Substr(size_t at, size_t n) const {
  std::string out;
  if (at >= size_) return out;
  n = std::min(n, size_ - at);
  out.resize(n);
  Reader reader(*this);
  reader.Seek(at);
  out.resize(reader.Read(out.data(), n));
  return out;
}

std::string RequestBody::Text() const {
  std::string out;
  out.reserve(size_);
  for (const Piece& p : pieces_) out.append(p.view);
  return out;
}

size_t RequestBody::Reader::Read(char* out, size_t n) {
  size_t copied = 0;
  while (copied < n && piece_ < body_->pieces_.size()) {
    const std::string_view v = body_->pieces_[piece_].view;
    const size_t take = std::min(n - copied, v.size() - offset_);
    std::memcpy(out + copied, v.data() + offset_, take);
    copied += take;
    offset_ += take;
    if (offset_ == v.size()) {
      ++piece_;
      offset_ = 0;
    }
  }
  return copied;
}

bool RequestBody::Reader::Seek(size_t at) {
  if (at > body_->size_) return false;
  piece_ = 0;
  offset_ = 0;
  while (piece_ < body_->pieces_.size() && at >= body_->pieces_[piece_].view.size()) {
    at -= body_->pieces_[piece_].view.size();
    ++piece_;
  }
  offset_ = at;
  return true;
}

}  // namespace agent::daemon::llm
