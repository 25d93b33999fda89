#include "worker/trainer/grad_scaler.h"

#include <fstream>
#include <iterator>
#include <map>
#include <utility>

#include "worker/trainer/torch_errors.h"

namespace lmtrain {

GradScaler::GradScaler(Options options, c10::Device device) : options_(options) {
  const auto on = torch::TensorOptions().device(device);
  scale_ = torch::full({1}, options_.init_scale, on.dtype(torch::kFloat32));
  growth_tracker_ = torch::zeros({1}, on.dtype(torch::kInt32));
  found_inf_ = torch::zeros({1}, on.dtype(torch::kFloat32));
}

torch::Tensor GradScaler::Scale(const torch::Tensor& loss) const {
  return loss * scale_.to(loss.device());
}

bool GradScaler::UnscaleAndCheck(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  found_inf_.zero_();
  // The kernel takes one device and dtype at a time, as GradScaler._unscale_grads_ groups them.
  std::map<std::pair<std::string, int>, std::vector<torch::Tensor>> groups;
  for (const torch::Tensor& p : params) {
    const torch::Tensor& g = p.grad();
    if (!g.defined()) continue;
    groups[{g.device().str(), static_cast<int>(g.scalar_type())}].push_back(g);
  }
  const torch::Tensor inv_scale = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat32);
  for (auto& [key, grads] : groups) {
    const c10::Device device = grads.front().device();
    torch::Tensor found = found_inf_.to(device);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found, inv_scale.to(device));
    if (found.data_ptr() != found_inf_.data_ptr()) found_inf_.add_(found.to(found_inf_.device()));
  }
  return found_inf_.item<float>() > 0;
}

void GradScaler::Update() {
  torch::NoGradGuard no_grad;
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                         options_.backoff_factor, options_.growth_interval);
}

double GradScaler::scale() const { return scale_.item<double>(); }

int64_t GradScaler::growth_tracker() const { return growth_tracker_.item<int64_t>(); }

absl::Status GradScaler::Save(const std::string& path) const {
  return CatchTorchErrors(
      [&] {
        c10::impl::GenericDict state(c10::StringType::get(), c10::AnyType::get());
        state.insert("scale", scale());
        state.insert("growth_factor", options_.growth_factor);
        state.insert("backoff_factor", options_.backoff_factor);
        state.insert("growth_interval", options_.growth_interval);
        state.insert("_growth_tracker", growth_tracker());
        const std::vector<char> bytes = torch::pickle_save(c10::IValue(state));
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!out.flush()) return absl::InternalError("cannot write " + path);
        return absl::OkStatus();
      },
      [&] { return "writing " + path; });
}

absl::Status GradScaler::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("checkpoint file missing: " + path);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  absl::Status status = CatchTorchErrors(
      [&] {
        const c10::IValue value = torch::pickle_load(bytes);
        const auto dict = value.toGenericDict();
        const double scale = dict.at("scale").toDouble();
        const int64_t tracker = dict.at("_growth_tracker").toInt();
        options_.growth_factor = dict.at("growth_factor").toDouble();
        options_.backoff_factor = dict.at("backoff_factor").toDouble();
        options_.growth_interval = dict.at("growth_interval").toInt();
        scale_.fill_(scale);
        growth_tracker_.fill_(tracker);
        return absl::OkStatus();
      },
      [&] { return "reading " + path; });
  if (status.ok()) return status;
  return absl::DataLossError(std::string(status.message()));
}

}  // namespace lmtrain
