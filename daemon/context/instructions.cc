#include "daemon/context/instructions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "daemon/context/prompt_text.h"

namespace agent::daemon::context {
namespace {

bool Inside(const std::string& path, const std::string& root) {
  if (path == root) return true;
  std::string prefix = root == "/" ? root : root + "/";
  return path.compare(0, prefix.size(), prefix) == 0;
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return "";
  return buf;
}

// Reads at most `limit` bytes of a regular file; `size` gets its full size. False when it is
// missing or not a regular file.
bool ReadCapped(const std::string& path, int64_t limit, std::string* text, int64_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  *size = st.st_size;
  text->clear();
  char buf[8192];
  while (static_cast<int64_t>(text->size()) < limit) {
    size_t want = static_cast<size_t>(
        std::min<int64_t>(sizeof(buf), limit - static_cast<int64_t>(text->size())));
    ssize_t n = ::read(fd, buf, want);
    if (n <= 0) break;
    text->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// Cuts `s` to at most `n` bytes without splitting a UTF-8 character.
void CutUtf8(std::string* s, size_t n) {
  if (s->size() <= n) return;
  while (n > 0 && (static_cast<unsigned char>((*s)[n]) & 0xC0) == 0x80) --n;
  s->resize(n);
}

bool Blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

struct Candidate {
  std::string real;   // the file to open
  std::string shown;  // the path the user and the model see
};

// The first of the preferred names present in `dir`, confined to the project.
bool FindInDirectory(const std::string& dir, const InstructionOptions& o, Candidate* out) {
  std::vector<std::string> names = {"AGENTS.override.md", "AGENTS.md"};
  names.insert(names.end(), o.fallback_names.begin(), o.fallback_names.end());
  for (const std::string& name : names) {
    if (name.empty() || name.find('/') != std::string::npos) continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    std::string real = RealPath(path);
    // A link out of the project (or to a directory) is not an instruction file.
    if (real.empty() || !Inside(real, o.project_root)) continue;
    if (::stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    out->real = real;
    out->shown = path == o.project_root + "/" + name
                     ? name
                     : path.substr(o.project_root.size() + (o.project_root == "/" ? 0 : 1));
    return true;
  }
  return false;
}

}  // namespace

int64_t Instructions::total_bytes() const {
  int64_t n = 0;
  for (const Instruction& f : files) n += static_cast<int64_t>(f.text.size());
  return n;
}

std::vector<std::string> DirectoryChain(const std::string& root, const std::string& cwd) {
  std::vector<std::string> dirs = {root};
  if (cwd.empty() || cwd == root || !Inside(cwd, root)) return dirs;
  std::string rest = cwd.substr(root.size() + (root == "/" ? 0 : 1));
  std::string dir = root == "/" ? "" : root;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t slash = rest.find('/', start);
    std::string part =
        rest.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty() && part != "." && part != "..") {
      dir += "/" + part;
      dirs.push_back(dir);
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return dirs;
}

Instructions DiscoverInstructions(const InstructionOptions& o) {
  std::vector<Candidate> candidates;
  if (!o.global_file.empty()) {
    // The user's own file: a symlink (a dotfiles checkout) is followed.
    std::string real = RealPath(o.global_file);
    if (!real.empty()) candidates.push_back({real, o.global_file});
  }
  for (const std::string& dir : DirectoryChain(o.project_root, o.cwd)) {
    Candidate c;
    if (FindInDirectory(dir, o, &c)) candidates.push_back(std::move(c));
  }
  Instructions out;
  int64_t left = std::max<int64_t>(0, o.max_bytes);
  std::vector<std::string> cut;
  for (const Candidate& c : candidates) {
    Instruction f;
    f.path = c.shown;
    std::string text;
    // One byte more than fits tells a cut file from one that fits exactly.
    if (!ReadCapped(c.real, left + 1, &text, &f.bytes) || f.bytes == 0 || Blank(text)) continue;
    if (f.bytes > left) {
      f.truncated = true;
      CutUtf8(&text, static_cast<size_t>(left));
      cut.push_back(absl::StrCat(OneLinePromptText(f.path), " (",
                                 f.bytes - static_cast<int64_t>(text.size()), " of ", f.bytes,
                                 " bytes)"));
    }
    left -= static_cast<int64_t>(text.size());
    f.text = std::move(text);
    out.files.push_back(std::move(f));
  }
  if (!cut.empty()) {
    out.cut_note =
        absl::StrCat("[instructions cut at the ", o.max_bytes / 1024, " KiB cap; left out: ");
    for (size_t i = 0; i < cut.size(); ++i) absl::StrAppend(&out.cut_note, i ? ", " : "", cut[i]);
    out.cut_note += "]";
  }
  return out;
}

std::string RenderInstructions(const Instructions& in) {
  std::string out;
  for (const Instruction& f : in.files) {
    if (f.text.empty()) continue;
    std::string text(absl::StripSuffix(f.text, "\n"));
    absl::StrAppend(&out, "\n\n<instructions path=\"", OneLinePromptText(f.path), "\">\n", text,
                    "\n</instructions>");
  }
  if (out.empty()) return "";
  std::string head =
      "# Instructions\n"
      "The files below hold the user's and the project's instructions: the user's own first, "
      "then from the project root down to the working directory. Follow them; where they "
      "disagree, the later (deeper) file wins. They cannot grant permissions.";
  if (!in.cut_note.empty()) absl::StrAppend(&out, "\n", in.cut_note);
  return head + out;
}

}  // namespace agent::daemon::context
