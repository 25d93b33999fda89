#include "server/metrics/grpc_metrics_interceptor.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace lmtrain {
namespace {
using grpc::experimental::InterceptionHookPoints;

class MetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(const char* method, ServerMetrics* metrics)
      : method_(method != nullptr ? method : "unknown"), metrics_(metrics) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const LabelValues labels = {method_, GrpcCodeName(methods->GetSendStatus().error_code())};
      metrics_->grpc_requests->Increment(labels);
      metrics_->grpc_request_seconds->Observe(labels, absl::ToDoubleSeconds(absl::Now() - start_));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  ServerMetrics* const metrics_;
  const absl::Time start_ = absl::Now();
};

class MetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(ServerMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(info->method(), metrics_);
  }

 private:
  ServerMetrics* const metrics_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeGrpcMetricsInterceptorFactory(ServerMetrics* metrics) {
  return std::make_unique<MetricsInterceptorFactory>(metrics);
}

std::string GrpcCodeName(grpc::StatusCode code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  if (i >= 0 && i < static_cast<int>(std::size(kNames))) return kNames[i];
  return absl::StrCat("CODE_", i);
}

}  // namespace lmtrain
