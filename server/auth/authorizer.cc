#include "server/auth/authorizer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

constexpr Role kUser = Role::kUser, kAdmin = Role::kAdmin, kWorker = Role::kWorker;

MethodPolicy Public(std::string method) { return MethodPolicy{std::move(method), true, {}, ""}; }
MethodPolicy Allow(std::string method, std::vector<Role> roles, std::string job_field = "") {
  return MethodPolicy{std::move(method), false, std::move(roles), std::move(job_field)};
}

}  // namespace

// THE POLICY TABLE. Add a row for every new RPC (the matrix test fails until you do).
// Users and admins call JobService; a row with a job field makes the handler check that the
// caller owns that job (admins see all). Only workers call WorkerService.
const std::vector<MethodPolicy>& DefaultPolicies() {
  static const auto* table = new std::vector<MethodPolicy>{
      // lmtrain.v1.JobService: users (their own jobs) and admins (every job).
      Allow("/lmtrain.v1.JobService/SubmitJob", {kUser, kAdmin}),
      Allow("/lmtrain.v1.JobService/ListJobs", {kUser, kAdmin}),  // Users: their own jobs.
      Allow("/lmtrain.v1.JobService/GetJob", {kUser, kAdmin}, "job_id"),
      Allow("/lmtrain.v1.JobService/CancelJob", {kUser, kAdmin}, "job_id"),
      Allow("/lmtrain.v1.JobService/WatchJob", {kUser, kAdmin}, "job_id"),
      Allow("/lmtrain.v1.JobService/RetryJob", {kUser, kAdmin}, "job_id"),
      Allow("/lmtrain.v1.JobService/Predict", {kUser, kAdmin}, "job_id"),
      // Users see the workers too (capacity, `lmctl explain`); no job data is in it.
      Allow("/lmtrain.v1.JobService/ListWorkers", {kUser, kAdmin}),
      // lmtrain.v1.WorkerService: worker agents only.
      Allow("/lmtrain.v1.WorkerService/RegisterWorker", {kWorker}),
      Allow("/lmtrain.v1.WorkerService/Sync", {kWorker}),
      Allow("/lmtrain.v1.WorkerService/ReportJobEvents", {kWorker}),
      // lmtrain.v1.ArtifactService: users upload what their jobs name and download their
      // jobs' checkpoints; workers fetch what the jobs they run name.
      Allow("/lmtrain.v1.ArtifactService/StatArtifact", {kUser, kAdmin}),
      Allow("/lmtrain.v1.ArtifactService/UploadArtifact", {kUser, kAdmin}),
      Allow("/lmtrain.v1.ArtifactService/DownloadArtifact", {kUser, kAdmin, kWorker}),
      Allow("/lmtrain.v1.ArtifactService/DownloadCheckpoint", {kUser, kAdmin}, "job_id"),
      // Standard services.
      Public("/grpc.health.v1.Health/Check"),
      Public("/grpc.health.v1.Health/Watch"),
      Allow("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            {kUser, kAdmin, kWorker}),
      Allow("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", {kUser, kAdmin, kWorker}),
  };
  return *table;
}

Authorizer::Authorizer() : policies_(DefaultPolicies()) {}

const MethodPolicy* Authorizer::Find(absl::string_view method) const {
  auto it = std::find_if(policies_.begin(), policies_.end(),
                         [&](const MethodPolicy& p) { return p.method == method; });
  return it == policies_.end() ? nullptr : &*it;
}

absl::Status Authorizer::Check(const Principal& caller, absl::string_view method) const {
  const MethodPolicy* policy = Find(method);
  if (policy == nullptr) {
    return absl::PermissionDeniedError(absl::StrCat("no authorization policy for ", method));
  }
  if (policy->is_public) return absl::OkStatus();
  if (!caller.authenticated || caller.role == Role::kAnonymous) {
    return absl::UnauthenticatedError(absl::StrCat(
        method, " needs a valid bearer token (lmctl --token / LMCTL_TOKEN; lm-worker --token)"));
  }
  if (std::find(policy->roles.begin(), policy->roles.end(), caller.role) == policy->roles.end()) {
    return absl::PermissionDeniedError(
        absl::StrCat(caller.user, " (", RoleName(caller.role), ") may not call ", method));
  }
  return absl::OkStatus();
}

}  // namespace lmtrain
