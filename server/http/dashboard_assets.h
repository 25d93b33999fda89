// The dashboard's files (server/http/assets/), compiled into lm-server so the binary is
// self-contained: embed_assets.cmake turns every file there into dashboard_assets.cc at
// build time.
#pragma once

#include <string_view>

namespace lmtrain {

struct DashboardAsset {
  std::string_view name;          // File name under assets/, e.g. "app.js".
  std::string_view content_type;  // From the extension.
  std::string_view body;
};

// The embedded file called `name` (exact match; no paths), or nullptr.
const DashboardAsset* FindDashboardAsset(std::string_view name);

}  // namespace lmtrain
