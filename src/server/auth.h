// Optional bearer-token check (--api-key). The comparison takes the same time
// whatever the presented token: both sides are hashed (SHA-256) and the
// digests compared with CRYPTO_memcmp, so neither content nor length leaks.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace tessera::server {

class ApiKeyCheck {
 public:
  ApiKeyCheck() = default;  // disabled: everything is allowed
  explicit ApiKeyCheck(std::string_view key);

  bool enabled() const { return enabled_; }
  // `authorization` is the Authorization header's value ("Bearer <key>";
  // the scheme is case-insensitive).
  bool allows(std::string_view authorization) const;

 private:
  static constexpr size_t kDigestBytes = 32;
  using Digest = std::array<unsigned char, kDigestBytes>;
  static Digest digest(std::string_view text);

  bool enabled_ = false;
  Digest key_digest_{};
};

}  // namespace tessera::server
