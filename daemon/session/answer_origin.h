// Whether the Approve being handled on this thread was typed by a person (common/
// person_answer.h). AgentService::Approve holds a PersonAnswerScope around its call into the
// session; ApprovalGate::Resolve, further down the same call on the same thread, reads it.
// A thread-local rather than a parameter threaded through Session::Approve, whose interface
// the session core's refactoring owns; the scope never outlives the synchronous call.
#pragma once

namespace agent::daemon {

class PersonAnswerScope {
 public:
  explicit PersonAnswerScope(bool person);
  ~PersonAnswerScope();
  PersonAnswerScope(const PersonAnswerScope&) = delete;
  PersonAnswerScope& operator=(const PersonAnswerScope&) = delete;

  // True inside a scope opened for a person's answer on this thread; false elsewhere.
  static bool Current();

 private:
  bool previous_;
};

}  // namespace agent::daemon
