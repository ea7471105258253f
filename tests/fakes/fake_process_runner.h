// The one fake of the process seam (daemon/base/process_runner.h). Run starts nothing: it
// records what would have run and answers with `answer` (by default a program that exited 0
// with no output). Start records what would have started and answers with `start`: by default
// Unavailable; a test that needs a live program (its caller waits for a real pid and reads
// real pipes) starts a stand-in through StandIn.
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

  // Starts `argv` (argv[0] an absolute path) for real in place of what was asked, keeping the
  // asked cwd and stdin.
  static absl::StatusOr<daemon::StartedProcess> StandIn(const daemon::ProcessSpec& asked,
                                                        std::vector<std::string> argv) {
    daemon::ProcessSpec spec = asked;
    spec.program = argv.front();
    spec.argv = std::move(argv);
    spec.env = {"PATH=/usr/bin:/bin"};
    return daemon::RealProcessRunner().Start(spec);
  }

  std::function<absl::StatusOr<daemon::StartedProcess>(const daemon::ProcessSpec&)> start =
      [](const daemon::ProcessSpec&) -> absl::StatusOr<daemon::StartedProcess> {
    return absl::UnavailableError("the fake starts nothing");
  };

  absl::StatusOr<daemon::StartedProcess> Start(const daemon::ProcessSpec& spec) const override {
    {
      agent::MutexLock l(&mu_);
      starts_.push_back(spec);
    }
    return start(spec);
  }

  std::vector<daemon::ProcessSpec> starts() const {
    agent::MutexLock l(&mu_);
    return starts_;
  }

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
  mutable std::vector<daemon::ProcessSpec> starts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::testing
