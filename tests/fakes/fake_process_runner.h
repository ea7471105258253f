// A ProcessRunner (daemon/base/process_runner.h) that starts nothing: it records what would have
// run and answers with `answer` (by default a program that exited 0 with no output).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "daemon/base/process_runner.h"

namespace agent::testing {

class FakeProcessRunner : public daemon::ProcessRunner {
 public:
  // A program that exited with `code`, having written `out` and `err`.
  static daemon::ProcessResult Exited(int code, std::string out = "", std::string err = "") {
    daemon::ProcessResult r;
    r.exited = true;
    r.exit_code = code;
    r.out = std::move(out);
    r.err = std::move(err);
    return r;
  }
  // Answers every run with this; by default an exit 0 with no output.
  void AnswerWith(absl::StatusOr<daemon::ProcessResult> result) {
    answer = [result](const daemon::ProcessSpec&) { return result; };
  }

  std::function<absl::StatusOr<daemon::ProcessResult>(const daemon::ProcessSpec&)> answer =
      [](const daemon::ProcessSpec&) { return Exited(0); };

  absl::StatusOr<daemon::ProcessResult> Run(const daemon::ProcessSpec& spec) const override {
    {
      agent::MutexLock l(&mu_);
      runs_.push_back(spec);
    }
    return answer(spec);
  }

  std::vector<daemon::ProcessSpec> runs() const {
    agent::MutexLock l(&mu_);
    return runs_;
  }

 private:
  mutable agent::Mutex mu_;
  mutable std::vector<daemon::ProcessSpec> runs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::testing
