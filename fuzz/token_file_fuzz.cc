// lm-server's --auth-tokens file (server/auth/token_file.h).
#include <cstdint>
#include <string>

#include "server/auth/token_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)lmtrain::ParseTokenFile(text, "tokens.yaml");
  return 0;
}
