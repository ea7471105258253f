#include "client/terminal/yes_no.h"

#include <cstdio>

#include "absl/strings/ascii.h"

namespace agent::client {

bool IsYes(const std::string& answer) {
  std::string a = absl::AsciiStrToLower(absl::StripAsciiWhitespace(answer));
  return a == "y" || a == "yes";
}

bool AskYes(const std::string& question) {
  std::printf("%s [y/N] ", question.c_str());
  std::fflush(stdout);
  char line[256];
  if (std::fgets(line, sizeof line, stdin) == nullptr) {
    std::printf("\n");
    return false;
  }
  return IsYes(line);
}

}  // namespace agent::client
