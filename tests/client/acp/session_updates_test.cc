#include "client/acp/session_updates.h"

#include "client/acp/modes.h"
#include "client/acp/prompt_content.h"
#include "client/acp/tool_calls.h"
#include "gtest/gtest.h"

namespace agent::client::acp {
namespace {

namespace v1 = agent::v1;

v1::Event Ready(const std::string& id, const std::string& name, const std::string& args) {
  v1::Event e;
  v1::ToolCall* c = e.mutable_tool_call_ready()->mutable_call();
  c->set_id(id);
  c->set_name(name);
  c->set_arguments(args);
  return e;
}

TEST(UpdateMapperTest, TextAndReasoningAreChunks) {
  UpdateMapper m("acp-1", "/p");
  v1::Event e;
  e.mutable_text_delta()->set_text("hi");
  std::vector<Json> u = m.Map(e);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0]["sessionUpdate"], Json("agent_message_chunk"));
  EXPECT_EQ(u[0]["content"]["text"], Json("hi"));
  e.mutable_reasoning_delta()->set_text("hmm");
  EXPECT_EQ(m.Map(e)[0]["sessionUpdate"], Json("agent_thought_chunk"));
}

TEST(UpdateMapperTest, OwnPromptsAreNotEchoedOthersAre) {
  UpdateMapper m("acp-1", "/p");
  v1::Event e;
  e.mutable_user_message()->set_text("hello");
  e.mutable_user_message()->set_client_name("acp-1");
  EXPECT_TRUE(m.Map(e).empty());
  e.mutable_user_message()->set_client_name("agent-9@pts/1");
  std::vector<Json> u = m.Map(e);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0]["sessionUpdate"], Json("user_message_chunk"));
}

TEST(UpdateMapperTest, AnEditIsADiffWithAbsolutePaths) {
  UpdateMapper m("acp-1", "/p/src");
  std::vector<Json> u =
      m.Map(Ready("c1", "edit_file", R"({"path":"a.txt","old_string":"x","new_string":"y"})"));
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0]["sessionUpdate"], Json("tool_call"));
  EXPECT_EQ(u[0]["kind"], Json("edit"));
  EXPECT_EQ(u[0]["status"], Json("pending"));
  EXPECT_EQ(u[0]["locations"][0]["path"], Json("/p/src/a.txt"));
  const Json& diff = u[0]["content"][0];
  EXPECT_EQ(diff["type"], Json("diff"));
  EXPECT_EQ(diff["path"], Json("/p/src/a.txt"));
  EXPECT_EQ(diff["oldText"], Json("x"));
  EXPECT_EQ(diff["newText"], Json("y"));
  v1::Event r;
  r.mutable_tool_result()->set_call_id("c1");
  r.mutable_tool_result()->set_name("edit_file");
  r.mutable_tool_result()->set_content("edited");
  u = m.Map(r);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0]["sessionUpdate"], Json("tool_call_update"));
  EXPECT_EQ(u[0]["status"], Json("completed"));
  EXPECT_EQ(u[0]["content"][0]["type"], Json("diff"));  // the change stays shown
}

TEST(UpdateMapperTest, BashOutputAccumulatesThenTheResultReplacesIt) {
  UpdateMapper m("acp-1", "/p");
  v1::Event started;
  started.mutable_tool_call_started()->set_call_id("b1");
  started.mutable_tool_call_started()->set_name("bash");
  EXPECT_EQ(m.Map(started)[0]["sessionUpdate"], Json("tool_call"));
  std::vector<Json> u = m.Map(Ready("b1", "bash", R"({"command":"make test\nmore"})"));
  EXPECT_EQ(u[0]["sessionUpdate"], Json("tool_call_update"));  // announced already
  EXPECT_EQ(u[0]["title"], Json("bash: make test…"));
  EXPECT_EQ(u[0]["kind"], Json("execute"));
  v1::Event out;
  out.mutable_tool_output()->set_call_id("b1");
  out.mutable_tool_output()->set_chunk("one\n");
  m.Map(out);
  out.mutable_tool_output()->set_chunk("two\n");
  u = m.Map(out);
  EXPECT_EQ(u[0]["status"], Json("in_progress"));
  EXPECT_EQ(u[0]["content"][0]["content"]["text"], Json("```\none\ntwo\n```"));
  v1::Event r;
  r.mutable_tool_result()->set_call_id("b1");
  r.mutable_tool_result()->set_name("bash");
  r.mutable_tool_result()->set_content("exit 2\n```x");
  r.mutable_tool_result()->set_is_error(true);
  u = m.Map(r);
  EXPECT_EQ(u[0]["status"], Json("failed"));
  EXPECT_EQ(u[0]["content"][0]["content"]["text"], Json("````\nexit 2\n```x\n````"));
}

// An editor's permission question for an escalation says it leaves the sandbox, and why.
TEST(UpdateMapperTest, AnEscalationsPermissionSaysItLeavesTheSandboxAndWhy) {
  UpdateMapper m("acp-1", "/p");
  m.Map(Ready("c1", "bash", R"({"command":"npm i -g pnpm","escalate":true})"));
  v1::PendingApproval a;
  a.set_call_id("c1");
  a.set_tool("bash");
  a.set_summary("npm i -g pnpm");
  a.set_requires_person(true);
  a.set_escalation(true);
  a.set_justification("the global prefix");
  Json f = m.PermissionToolCall(a);
  EXPECT_EQ(f["title"], Json("Outside the sandbox: npm i -g pnpm"));
  ASSERT_TRUE(f["content"].is_array());
  EXPECT_EQ(f["content"][0]["content"]["text"],
            Json("The agent asks to run this command outside the sandbox, with all your access "
                 "(files, network, secrets). Its reason: the global prefix"));
  a.set_escalation(false);
  EXPECT_EQ(m.PermissionToolCall(a)["title"], Json("bash: npm i -g pnpm"));
}

TEST(UpdateMapperTest, UnreadableArgumentsFallBackToTheName) {
  UpdateMapper m("acp-1", "/p");
  std::vector<Json> u = m.Map(Ready("x", "mcp__fs__read", "{not json"));
  EXPECT_EQ(u[0]["title"], Json("mcp__fs__read"));
  EXPECT_EQ(u[0]["kind"], Json("other"));
  EXPECT_FALSE(u[0].contains("content"));
}

TEST(UpdateMapperTest, PlansMapStatuses) {
  UpdateMapper m("acp-1", "/p");
  v1::Event e;
  v1::PlanStep* s = e.mutable_plan_updated()->add_steps();
  s->set_text("read");
  s->set_status(v1::PLAN_STEP_STATUS_DONE);
  s = e.mutable_plan_updated()->add_steps();
  s->set_text("write");
  s->set_status(v1::PLAN_STEP_STATUS_IN_PROGRESS);
  std::vector<Json> u = m.Map(e);
  EXPECT_EQ(u[0]["sessionUpdate"], Json("plan"));
  EXPECT_EQ(u[0]["entries"][0]["status"], Json("completed"));
  EXPECT_EQ(u[0]["entries"][1]["status"], Json("in_progress"));
  EXPECT_EQ(u[0]["entries"][1]["priority"], Json("medium"));
}

TEST(UpdateMapperTest, ReplayShowsPromptsRepliesAndCalls) {
  UpdateMapper m("acp-1", "/p");
  Json messages = ParseJson(R"([
    {"role":"system","content":"sys"},
    {"role":"user","content":"list files"},
    {"role":"assistant","content":null,"tool_calls":[
      {"id":"t1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},
    {"role":"tool","tool_call_id":"t1","content":"a\nb"},
    {"role":"assistant","content":"two files"}])")
                      .value();
  std::vector<Json> u = m.Replay(messages);
  ASSERT_EQ(u.size(), 4u);
  EXPECT_EQ(u[0]["sessionUpdate"], Json("user_message_chunk"));
  EXPECT_EQ(u[1]["sessionUpdate"], Json("tool_call"));
  EXPECT_EQ(u[1]["title"], Json("bash: ls"));
  EXPECT_EQ(u[2]["status"], Json("completed"));
  EXPECT_EQ(u[3]["content"]["text"], Json("two files"));
}

TEST(PromptContentTest, TextAndEmbeddedFilesAreJoined) {
  Json blocks = ParseJson(R"([{"type":"text","text":"explain"},
    {"type":"resource","resource":{"uri":"file:///p/a.c","text":"int x;"}}])")
                    .value();
  absl::StatusOr<PromptText> p = PromptFromContent(blocks);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->text, "explain\n\nFile /p/a.c:\n```\nint x;\n```");
  EXPECT_FALSE(p->typed_only);
  p = PromptFromContent(ParseJson(R"([{"type":"text","text":"/review @a.c"}])").value());
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->typed_only);
}

TEST(PromptContentTest, WhatCannotBeSentIsInvalidArgument) {
  EXPECT_EQ(PromptFromContent(Json::array()).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PromptFromContent(Json("text")).status().code(), absl::StatusCode::kInvalidArgument);
  Json audio = ParseJson(R"([{"type":"audio","data":"AAAA","mimeType":"audio/wav"}])").value();
  EXPECT_EQ(PromptFromContent(audio).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      PromptFromContent(ParseJson(R"([{"type":"text","text":"  "}])").value()).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(ModesTest, ListsThePolicyModesAndMapsBack) {
  Json state = ModeState(v1::POLICY_MODE_READ_ONLY);
  EXPECT_EQ(state["currentModeId"], Json("read-only"));
  EXPECT_EQ(state["availableModes"].size(), 6u);
  EXPECT_EQ(PolicyOfMode("plan"), v1::POLICY_MODE_PLAN);
  EXPECT_EQ(PolicyOfMode("edits"), v1::POLICY_MODE_ACCEPT_EDITS);
  EXPECT_EQ(PolicyOfMode("yes"), v1::POLICY_MODE_YES);
  EXPECT_EQ(PolicyOfMode("ask"), v1::POLICY_MODE_ASK);
  EXPECT_FALSE(PolicyOfMode("sudo").has_value());
  EXPECT_EQ(ModeState(v1::POLICY_MODE_DENY_UNRULED)["currentModeId"], Json("ask"));
}

TEST(ToolCallsTest, KindsOfOurTools) {
  EXPECT_EQ(ToolKindOf("read_file"), "read");
  EXPECT_EQ(ToolKindOf("search"), "search");
  EXPECT_EQ(ToolKindOf("write_file"), "edit");
  EXPECT_EQ(ToolKindOf("bash"), "execute");
  EXPECT_EQ(ToolKindOf("task"), "other");
}

}  // namespace
}  // namespace agent::client::acp
