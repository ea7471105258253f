#include "daemon/session/answer_origin.h"

namespace agent::daemon {
namespace {

thread_local bool person_answer = false;

}  // namespace

PersonAnswerScope::PersonAnswerScope(bool person) : previous_(person_answer) {
  person_answer = person;
}

PersonAnswerScope::~PersonAnswerScope() { person_answer = previous_; }

bool PersonAnswerScope::Current() { return person_answer; }

}  // namespace agent::daemon
