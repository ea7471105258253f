#include "daemon/session/editor_text.h"

#include <atomic>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

TEST(EditorTextTest, WithoutAnEditorNothingIsAsked) {
  EditorText t;
  EXPECT_EQ(t.Ask(
                "/p/a.txt", [](const v1::Event&) { return false; }, nullptr),
            std::nullopt);
}

TEST(EditorTextTest, TheEditorsAnswerIsWhatTheReaderGets) {
  EditorText t;
  std::thread editor;
  v1::FileTextRequested asked;
  std::optional<std::string> text = t.Ask(
      "/p/a.txt",
      [&](const v1::Event& e) {
        asked = e.file_text_requested();
        editor = std::thread(
            [&t, id = asked.request_id()] { EXPECT_TRUE(t.Provide(id, true, "unsaved\n").ok()); });
        return true;
      },
      nullptr);
  editor.join();
  EXPECT_EQ(asked.path(), "/p/a.txt");
  EXPECT_EQ(asked.request_id().size(), 32u);
  EXPECT_EQ(text, "unsaved\n");
  // Answered once: a second answer, or one for an id never asked, finds nothing.
  EXPECT_TRUE(absl::IsNotFound(t.Provide(asked.request_id(), true, "again")));
  EXPECT_TRUE(absl::IsNotFound(t.Provide("0123", true, "forged")));
}

TEST(EditorTextTest, NoBufferOrAnOversizedOneReadsTheDisk) {
  EditorText t;
  auto answer = [&t](bool found, std::string text) {
    return t.Ask(
        "/p/a.txt",
        [&](const v1::Event& e) {
          // Answered before Ask waits: the answer must still be found.
          EXPECT_TRUE(t.Provide(e.file_text_requested().request_id(), found, text).ok());
          return true;
        },
        nullptr);
  };
  EXPECT_EQ(answer(false, ""), std::nullopt);
  EXPECT_EQ(answer(true, std::string(EditorText::kMaxTextBytes + 1, 'x')), std::nullopt);
  EXPECT_EQ(answer(true, ""), "");  // an empty buffer is a text
}

TEST(EditorTextTest, ACancelledTurnDoesNotWaitForASilentEditor) {
  EditorText t;
  std::atomic<bool> cancelled{true};
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(t.Ask(
                "/p/a.txt", [](const v1::Event&) { return true; }, &cancelled),
            std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - start, absl::ToChronoSeconds(EditorText::kWait));
}

}  // namespace
}  // namespace agent::daemon
