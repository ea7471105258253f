// absl::Status <-> grpc::Status: the only place where codes are converted (they map 1:1).
#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace agent {

grpc::Status ToGrpcStatus(const absl::Status& s);
absl::Status FromGrpcStatus(const grpc::Status& s);

}  // namespace agent
