#include "daemon/context/usage.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace agent::daemon::context {
namespace {

namespace v1 = agent::v1;

absl::Status ReadPrice(const Json& j, const char* key, bool required, double* out) {
  auto it = j.find(key);
  if (it == j.end()) {
    return required ? absl::InvalidArgumentError(absl::StrCat("\"", key, "\" is missing"))
                    : absl::OkStatus();
  }
  if (!it->is_number() || it->get<double>() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" must be a number >= 0"));
  }
  *out = it->get<double>();
  return absl::OkStatus();
}

v1::Usage FromReply(const std::optional<llm::Usage>& u, double cost) {
  v1::Usage out;
  out.set_requests(1);
  if (u.has_value()) {
    out.set_prompt_tokens(u->prompt_tokens);
    out.set_completion_tokens(u->completion_tokens);
    out.set_cached_tokens(u->cached_tokens);
    out.set_cache_write_tokens(u->cache_write_tokens);
  }
  out.set_cost_usd(cost);
  return out;
}

}  // namespace

absl::StatusOr<PriceTable> PriceTable::FromJson(const Json& prices) {
  PriceTable t;
  if (prices.is_null()) return t;
  if (!prices.is_object()) return absl::InvalidArgumentError("\"prices\" must be an object");
  for (auto it = prices.begin(); it != prices.end(); ++it) {
    if (!it.value().is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"prices\".\"", it.key(), "\" must be {\"input\", \"output\"}"));
    }
    Price p;
    for (auto [key, required, field] :
         {std::tuple{"input", true, &p.input}, std::tuple{"output", true, &p.output},
          std::tuple{"cached_input", false, &p.cached_input},
          std::tuple{"cache_write", false, &p.cache_write}}) {
      if (absl::Status s = ReadPrice(it.value(), key, required, field); !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("\"prices\".\"", it.key(), "\": ", s.message()));
      }
    }
    t.prices_[it.key()] = p;
  }
  return t;
}

const Price* PriceTable::Find(const std::string& model) const {
  auto it = prices_.find(model);
  return it == prices_.end() ? nullptr : &it->second;
}

double PriceTable::Cost(const std::string& model, const llm::Usage& u) const {
  const Price* p = Find(model);
  if (p == nullptr) return 0;
  // Clamped so that counts a provider got wrong never price a negative number of tokens.
  const int64_t prompt = std::max<int64_t>(u.prompt_tokens, 0);
  const int64_t cached = std::clamp<int64_t>(u.cached_tokens, 0, prompt);
  const int64_t written = std::clamp<int64_t>(u.cache_write_tokens, 0, prompt - cached);
  const double cached_price = p->cached_input >= 0 ? p->cached_input : p->input;
  const double write_price = p->cache_write >= 0 ? p->cache_write : p->input * 1.25;
  return (static_cast<double>(prompt - cached - written) * p->input +
          static_cast<double>(cached) * cached_price + static_cast<double>(written) * write_price +
          static_cast<double>(u.completion_tokens) * p->output) /
         1e6;
}

void Add(v1::Usage* total, const v1::Usage& more) {
  total->set_prompt_tokens(total->prompt_tokens() + more.prompt_tokens());
  total->set_completion_tokens(total->completion_tokens() + more.completion_tokens());
  total->set_cached_tokens(total->cached_tokens() + more.cached_tokens());
  total->set_cache_write_tokens(total->cache_write_tokens() + more.cache_write_tokens());
  total->set_requests(total->requests() + more.requests());
  total->set_retries(total->retries() + more.retries());
  total->set_cost_usd(total->cost_usd() + more.cost_usd());
}

void UsageMeter::AddRequest(const std::optional<llm::Usage>& usage, double cost) {
  v1::Usage one = FromReply(usage, cost);
  Add(&turn_, one);
  Add(&session_, one);
}

void UsageMeter::AddRetry() {
  turn_.set_retries(turn_.retries() + 1);
  session_.set_retries(session_.retries() + 1);
}

Json UsageMeter::ToJson() const {
  return Json{{"prompt_tokens", session_.prompt_tokens()},
              {"completion_tokens", session_.completion_tokens()},
              {"cached_tokens", session_.cached_tokens()},
              {"cache_write_tokens", session_.cache_write_tokens()},
              {"requests", session_.requests()},
              {"retries", session_.retries()},
              {"cost_usd", session_.cost_usd()}};
}

void UsageMeter::LoadJson(const Json& j) {
  session_.Clear();
  if (!j.is_object()) return;
  session_.set_prompt_tokens(GetInt(j, "prompt_tokens"));
  session_.set_completion_tokens(GetInt(j, "completion_tokens"));
  session_.set_cached_tokens(GetInt(j, "cached_tokens"));
  session_.set_cache_write_tokens(GetInt(j, "cache_write_tokens"));
  session_.set_requests(static_cast<int32_t>(GetInt(j, "requests")));
  session_.set_retries(static_cast<int32_t>(GetInt(j, "retries")));
  auto it = j.find("cost_usd");
  if (it != j.end() && it->is_number()) session_.set_cost_usd(it->get<double>());
}

v1::Event UsageEvent(const llm::Usage& usage, double cost) {
  v1::Event e;
  *e.mutable_usage() = FromReply(usage, cost);
  return e;
}

}  // namespace agent::daemon::context
