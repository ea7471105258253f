// RequestBody: a request's bytes as a list of pieces, each a view of text kept alive by a
// shared owner. A session's request at 10,000 messages is megabytes that were all sent
// before; built as pieces of its RequestCache's text, a step costs what is new, not a copy of
// everything (the transport reads the pieces in order: curl_model_client.cc).
// A body is immutable once built and safe to read from any thread; the owners it shares must
// never change the bytes it views (RequestCache only ever appends after them).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace agent::daemon::llm {

class RequestBody {
 public:
  RequestBody() = default;
  explicit RequestBody(std::string text) { Append(std::move(text)); }

  // A piece of its own.
  void Append(std::string text);
  // `view`, which `owner` keeps alive and unchanged.
  void Append(std::shared_ptr<const void> owner, std::string_view view);
  void Append(const RequestBody& other);
  // `text` inserted before byte `at` of the body (at most size()), splitting a piece.
  void Insert(size_t at, std::string text);
  // Keeps the first `n` bytes (the views shortened; the owners' text is untouched).
  void Truncate(size_t n);

  // `n` bytes from byte `at`, copied (clamped to the body).
  std::string Substr(size_t at, size_t n) const;

  size_t size() const { return size_; }
  size_t pieces() const { return pieces_.size(); }
  // The whole body as one string: for tests and diagnostics, never on the request path.
  std::string Text() const;

  // Reads the body in order, for a transport's read callback; one per attempt.
  class Reader {
   public:
    explicit Reader(const RequestBody& body) : body_(&body) {}
    // Copies up to `n` next bytes to `out`; 0 at the end.
    size_t Read(char* out, size_t n);
    // Continues from byte `at` (a rewind); false past the end.
    bool Seek(size_t at);

   private:
    const RequestBody* body_;
    size_t piece_ = 0;   // the piece being read
    size_t offset_ = 0;  // in that piece
  };

 private:
  struct Piece {
    std::shared_ptr<const void> owner;
    std::string_view view;
  };
  std::vector<Piece> pieces_;
  size_t size_ = 0;
};

}  // namespace agent::daemon::llm
