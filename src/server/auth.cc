#include "server/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cctype>

namespace tessera::server {

ApiKeyCheck::ApiKeyCheck(std::string_view key) : enabled_(true), key_digest_(digest(key)) {}

ApiKeyCheck::Digest ApiKeyCheck::digest(std::string_view text) {
  Digest d{};
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), d.data(), &size, EVP_sha256(), nullptr);
  return d;
}

bool ApiKeyCheck::allows(std::string_view authorization) const {
  if (!enabled_) return true;
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() < kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  const Digest presented = digest(token);
  return CRYPTO_memcmp(presented.data(), key_digest_.data(), kDigestBytes) == 0;
}

}  // namespace tessera::server
