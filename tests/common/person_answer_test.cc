// The person-answer mark crosses the wire as gRPC metadata: gRPC itself must accept it as
// sent, and a client and a daemon of different versions must agree on it.
#include "common/person_answer.h"

#include <grpc/grpc.h>
#include <grpc/slice.h>

#include <string_view>

#include "gtest/gtest.h"

namespace agent {
namespace {

grpc_slice Slice(const char* s) { return grpc_slice_from_static_string(s); }

TEST(PersonAnswerTest, TheMarkIsLegalPlainTextMetadata) {
  // A key gRPC refuses (upper case, spaces) would fail the call or never reach the daemon.
  EXPECT_TRUE(grpc_header_key_is_legal(Slice(kPersonAnswerKey)));
  EXPECT_FALSE(grpc_header_key_is_legal(Slice("Agent-Person")));  // the check can fail
  // A "-bin" key would carry base64-decoded bytes, not the text compared with.
  EXPECT_FALSE(grpc_is_binary_header(Slice(kPersonAnswerKey)));
  EXPECT_TRUE(grpc_header_nonbin_value_is_legal(Slice(kPersonAnswerValue)));
  // "grpc-" keys are gRPC's own.
  EXPECT_FALSE(std::string_view(kPersonAnswerKey).starts_with("grpc-"));
}

TEST(PersonAnswerTest, TheWireFormatStaysAsItWas) {
  // Clients and daemons of other versions send and compare exactly these.
  EXPECT_STREQ(kPersonAnswerKey, "agent-person");
  EXPECT_STREQ(kPersonAnswerValue, "1");
}

}  // namespace
}  // namespace agent
