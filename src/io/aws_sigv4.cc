#include "io/aws_sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>

#include "util/error.h"

namespace imgpipe {
namespace {

constexpr const char* kAlgorithm = "AWS4-HMAC-SHA256";

std::string Hex(const unsigned char* bytes, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

// HMAC-SHA256(key, data), raw bytes.
std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &length) == nullptr) {
    throw Error("SigV4: OpenSSL's HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(mac), length);
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// AWS's Trimall: no leading or trailing whitespace, each inner run of spaces one space.
std::string TrimAll(std::string_view value) {
  std::string out;
  bool space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

bool IsAmzDate(const std::string& d) {
  if (d.size() != 16 || d[8] != 'T' || d[15] != 'Z') return false;
  for (int i : {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14}) {
    if (!std::isdigit(static_cast<unsigned char>(d[i]))) return false;
  }
  return true;
}

void Require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("SigV4: " + what);
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw Error("SigV4: OpenSSL's SHA-256 failed");
  }
  return Hex(digest, length);
}

std::string AwsUriEncode(std::string_view text, bool encode_slash) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || (c == '/' && !encode_slash)) {
      out += ch;
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
  }
  return out;
}

SigV4Signature SignSigV4(const SigV4Request& request, const AwsCredentials& credentials,
                         const SigV4Scope& scope, const std::string& amz_date) {
  Require(IsAmzDate(amz_date), "the date must be YYYYMMDDTHHMMSSZ, not '" + amz_date + "'");
  Require(!request.host.empty(), "the request has no host");
  Require(!scope.region.empty() && !scope.service.empty(), "the scope needs a region and a service");
  Require(!credentials.access_key_id.empty() && !credentials.secret_access_key.empty(),
          "the credentials need an access key id and a secret access key");
  SigV4Signature out;
  const std::string payload =
      request.payload_sha256.empty() ? Sha256Hex("") : request.payload_sha256;
  // 1. The headers the signer adds, then all of them by lower-case name, values trimmed
  //    and repeated names joined in the order given.
  out.added_headers.emplace_back("x-amz-date", amz_date);
  if (request.payload_header) out.added_headers.emplace_back("x-amz-content-sha256", payload);
  if (!credentials.session_token.empty()) {
    out.added_headers.emplace_back("x-amz-security-token", credentials.session_token);
  }
  std::map<std::string, std::string> headers = {{"host", TrimAll(request.host)}};
  for (const auto& [name, value] : request.headers) {
    const std::string key = Lower(name);
    const bool owned = key == "authorization" || key == "host" ||
                       std::any_of(out.added_headers.begin(), out.added_headers.end(),
                                   [&](const auto& h) { return h.first == key; });
    Require(!owned, "the header " + name + " is set by the signer");
    auto [it, fresh] = headers.emplace(key, TrimAll(value));
    if (!fresh) it->second += "," + TrimAll(value);
  }
  for (const auto& [name, value] : out.added_headers) headers.emplace(name, value);
  std::string canonical_headers, signed_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += name + ":" + value + "\n";
    signed_headers += (signed_headers.empty() ? "" : ";") + name;
  }
  // 2. The query, each name and value encoded, sorted by name then value.
  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [name, value] : request.query) {
    query.emplace_back(AwsUriEncode(name, true), AwsUriEncode(value, true));
  }
  std::sort(query.begin(), query.end());
  std::string canonical_query;
  for (const auto& [name, value] : query) {
    canonical_query += (canonical_query.empty() ? "" : "&") + name + "=" + value;
  }
  // 3. The canonical request, the string to sign, the key derived from the secret, the
  //    signature.
  const std::string path = request.path.empty() ? "/" : request.path;
  out.canonical_request = request.method + "\n" + AwsUriEncode(path, false) + "\n" +
                          canonical_query + "\n" + canonical_headers + "\n" + signed_headers +
                          "\n" + payload;
  const std::string date = amz_date.substr(0, 8);
  const std::string credential_scope =
      date + "/" + scope.region + "/" + scope.service + "/aws4_request";
  out.string_to_sign = std::string(kAlgorithm) + "\n" + amz_date + "\n" + credential_scope + "\n" +
                       Sha256Hex(out.canonical_request);
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  key = HmacSha256(key, scope.region);
  key = HmacSha256(key, scope.service);
  key = HmacSha256(key, "aws4_request");
  const std::string mac = HmacSha256(key, out.string_to_sign);
  out.signature = Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  out.authorization = std::string(kAlgorithm) + " Credential=" + credentials.access_key_id + "/" +
                      credential_scope + ", SignedHeaders=" + signed_headers +
                      ", Signature=" + out.signature;
  return out;
}

std::string AmzDate(long long unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

}  // namespace imgpipe
