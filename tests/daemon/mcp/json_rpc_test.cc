#include "daemon/mcp/json_rpc.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::mcp {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

using Kind = Incoming::Kind;

Incoming ClassifyText(const std::string& text) { return Classify(Json::parse(text)); }

TEST(JsonRpcTest, RequestsAndNotificationsCarryParamsOnlyWhenGiven) {
  EXPECT_EQ(MakeRequest(3, "tools/list", Json()),
            Json::parse(R"({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})"));
  EXPECT_EQ(MakeRequest(4, "tools/call", {{"name", "echo"}}),
            Json::parse(R"({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                            "params": {"name": "echo"}})"));
  EXPECT_EQ(MakeNotification("notifications/initialized", Json()),
            Json::parse(R"({"jsonrpc": "2.0", "method": "notifications/initialized"})"));
  EXPECT_EQ(MakeNotification("n", Json::object()),
            Json::parse(R"({"jsonrpc": "2.0", "method": "n", "params": {}})"));
}

TEST(JsonRpcTest, RepliesEchoTheIdAsGiven) {
  EXPECT_EQ(MakeResult("abc", Json::object()),
            Json::parse(R"({"jsonrpc": "2.0", "id": "abc", "result": {}})"));
  EXPECT_EQ(MakeError(7, kMethodNotFound, "no such method: roots/list"),
            Json::parse(R"({"jsonrpc": "2.0", "id": 7,
                            "error": {"code": -32601, "message": "no such method: roots/list"}})"));
}

TEST(JsonRpcTest, WhatWeBuildClassifiesAsWhatItIs) {
  Incoming req = Classify(MakeRequest(9, "ping", {{"x", 1}}));
  EXPECT_EQ(req.kind, Kind::kRequest);
  EXPECT_EQ(req.id, 9);
  EXPECT_EQ(req.method, "ping");
  EXPECT_EQ(req.params, Json({{"x", 1}}));

  Incoming note = Classify(MakeNotification("notifications/progress", Json()));
  EXPECT_EQ(note.kind, Kind::kNotification);
  EXPECT_EQ(note.method, "notifications/progress");
  EXPECT_TRUE(note.params.is_null());
  EXPECT_TRUE(note.id.is_null());

  Incoming ok = Classify(MakeResult(5, {{"tools", Json::array()}}));
  EXPECT_EQ(ok.kind, Kind::kResponse);
  EXPECT_EQ(ok.id, 5);
  EXPECT_EQ(ok.result, Json({{"tools", Json::array()}}));
  EXPECT_EQ(ok.error, std::nullopt);
  EXPECT_EQ(ok.malformed, std::nullopt);

  Incoming err = Classify(MakeError(6, -32000, "boom"));
  EXPECT_EQ(err.kind, Kind::kResponse);
  EXPECT_TRUE(err.result.is_null());
  EXPECT_THAT(err.error, Optional(std::string("error -32000: boom")));
  EXPECT_EQ(err.malformed, std::nullopt);
}

TEST(JsonRpcTest, ARequestIdMayBeAString) {
  Incoming in = ClassifyText(R"({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})");
  EXPECT_EQ(in.kind, Kind::kRequest);
  EXPECT_EQ(in.id, "r1");
}

TEST(JsonRpcTest, AnErrorWithoutCodeOrMessageIsStillReported) {
  Incoming in = ClassifyText(R"({"jsonrpc": "2.0", "id": 1, "error": {}})");
  EXPECT_EQ(in.kind, Kind::kResponse);
  EXPECT_EQ(in.malformed, std::nullopt);
  EXPECT_THAT(in.error, Optional(std::string("error 0: (none)")));
}

TEST(JsonRpcTest, AMalformedReplyIsStillAResponseSoItsCallCanEnd) {
  Incoming both = ClassifyText(R"({"id": 1, "result": {}, "error": {"code": 1}})");
  EXPECT_EQ(both.kind, Kind::kResponse);
  EXPECT_THAT(both.malformed, Optional(HasSubstr("both")));

  Incoming neither = ClassifyText(R"({"id": 1})");
  EXPECT_EQ(neither.kind, Kind::kResponse);
  EXPECT_THAT(neither.malformed, Optional(HasSubstr("neither")));

  Incoming text_error = ClassifyText(R"({"id": 2, "error": "it broke"})");
  EXPECT_EQ(text_error.kind, Kind::kResponse);
  EXPECT_THAT(text_error.malformed, Optional(HasSubstr("not an object")));
  EXPECT_EQ(text_error.error, std::nullopt);

  Incoming string_id = ClassifyText(R"({"id": "3", "result": 1})");
  EXPECT_EQ(string_id.kind, Kind::kResponse);
  EXPECT_THAT(string_id.malformed, Optional(HasSubstr(R"(its id "3" is not the integer)")));
  EXPECT_EQ(string_id.result, 1);

  Incoming float_id = ClassifyText(R"({"id": 4.0, "result": null})");
  EXPECT_EQ(float_id.kind, Kind::kResponse);
  EXPECT_THAT(float_id.malformed, Optional(HasSubstr("not the integer")));
}

TEST(JsonRpcTest, AnythingElseIsInvalid) {
  for (const char* text : {
           R"([1, 2])",                           // not an object
           R"("ping")",                           //
           R"({})",                               // no id, no method
           R"({"result": {}})",                   // a reply to nothing
           R"({"id": true, "result": {}})",       // an id that is neither string nor number
           R"({"id": null, "result": {}})",       //
           R"({"id": 1, "method": 5})",           // a method that is not a string
           R"({"id": null, "method": "x"})",      // neither request nor notification
           R"({"id": {"n": 1}, "method": "x"})",  //
           R"({"id": 1.5, "method": "x"})",       // a request id must be string or integer
       }) {
    EXPECT_EQ(ClassifyText(text).kind, Kind::kInvalid) << text;
  }
}

TEST(JsonRpcTest, OwnRequestIdReadsOurIntegerInTheFormsAServerMangles) {
  EXPECT_THAT(OwnRequestId(Json(12)), Optional(12));
  EXPECT_THAT(OwnRequestId(Json(12.0)), Optional(12));
  EXPECT_THAT(OwnRequestId(Json("12")), Optional(12));
  EXPECT_THAT(OwnRequestId(Json("123456789012345678")), Optional(123456789012345678));
}

TEST(JsonRpcTest, OwnRequestIdRefusesWhatNamesNoCallOfOurs) {
  for (const Json& id :
       {Json(12.5), Json(0.0), Json(-3.0), Json(1e300), Json(""), Json("012"), Json("-1"),
        Json("+1"), Json("1a"), Json(" 1"), Json("1234567890123456789"), Json(nullptr), Json(true),
        Json::object(), Json::array()}) {
    EXPECT_EQ(OwnRequestId(id), std::nullopt) << id.dump();
  }
}

}  // namespace
}  // namespace agent::daemon::mcp
