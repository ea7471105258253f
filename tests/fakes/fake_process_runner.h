// A ProcessRunner (daemon/process_runner.h) that starts nothing: it records what would have run
// and answers with `answer` (by default a program that exited 0 with no output).
#pragma once

#include <functional>
#include <vector>

#include "common/mutex.h"
#include "daemon/process_runner.h"

namespace agent::testing {

class FakeProcessRunner : public daemon::ProcessRunner {
 public:
  std::function<absl::StatusOr<daemon::ProcessResult>(const daemon::ProcessSpec&)> answer =
      [](const daemon::ProcessSpec&) {
        daemon::ProcessResult r;
        r.exited = true;
        r.exit_code = 0;
        return r;
      };

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
