#include "common/grpc_status.h"

#include "gtest/gtest.h"

namespace agent {
namespace {

TEST(GrpcStatusTest, CodesAndMessagesCrossBothWays) {
  for (absl::Status s : {absl::OkStatus(), absl::NotFoundError("no session abc"),
                         absl::PermissionDeniedError("a program started by a tool"),
                         absl::FailedPreconditionError("busy"), absl::UnavailableError("down")}) {
    const grpc::Status g = ToGrpcStatus(s);
    EXPECT_EQ(static_cast<int>(g.error_code()), static_cast<int>(s.code())) << s;
    EXPECT_EQ(g.error_message(), std::string(s.message()));
    EXPECT_EQ(FromGrpcStatus(g), s);
  }
}

}  // namespace
}  // namespace agent
