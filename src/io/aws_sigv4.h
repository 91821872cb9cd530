// AWS Signature Version 4 for S3 and S3-compatible stores (MinIO, Ceph, GCS's XML API
// with HMAC keys): the canonical request, the string to sign and the Authorization
// header, over OpenSSL's SHA-256 and HMAC. Pure functions: no clock, no network.
//
// The canonical request is S3's: each path segment percent-encoded once (no
// normalisation of "." or "//", which S3 keys may hold), the query sorted by encoded name
// then value, the headers lower-cased, trimmed, their inner runs of spaces collapsed,
// repeated names joined with ",", sorted by name. Checked against AWS's published
// signature test suite (aws_sigv4_test.cc).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace imgpipe {

// An access key pair and, for temporary credentials, the session token. Never logged:
// nothing in this layer prints a secret or a token.
struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty: none
};

// What a signature covers: the request as it goes out, before signing.
struct SigV4Request {
  std::string method = "GET";
  std::string host;  // the Host header: "bucket.s3.amazonaws.com", "127.0.0.1:9000"
  std::string path = "/";  // decoded; "/" + key for an object
  std::vector<std::pair<std::string, std::string>> query;    // decoded names and values
  std::vector<std::pair<std::string, std::string>> headers;  // other headers to sign
  // Lower-case hex SHA-256 of the body, or "UNSIGNED-PAYLOAD". Empty: the empty body's.
  std::string payload_sha256;
  // Sends and signs it as x-amz-content-sha256, which S3 requires (libcurl's own
  // --aws-sigv4 does not); AWS's generic test suite signs without it.
  bool payload_header = true;
};

// The region and service of the credential scope ("us-east-1", "s3").
struct SigV4Scope {
  std::string region;
  std::string service = "s3";
};

// A signed request's parts.
struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;      // lower-case hex
  std::string authorization;  // the Authorization header's value
  // The headers to send beside `request.headers` and Authorization, all signed:
  // x-amz-date, x-amz-content-sha256 (with payload_header) and, with a session token,
  // x-amz-security-token.
  std::vector<std::pair<std::string, std::string>> added_headers;
};

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// AWS's UriEncode: A-Z a-z 0-9 - . _ ~ kept, every other byte %XX (upper-case hex); '/'
// kept unless `encode_slash`.
std::string AwsUriEncode(std::string_view text, bool encode_slash);

// Signs `request` with `credentials` for `scope` at `amz_date` ("20150830T123600Z", UTC).
// Throws InvalidArgument for an amz_date not of that form, an empty host, region, service,
// access key or secret, or a header the signer sets itself (Authorization, Host and the
// added ones).
SigV4Signature SignSigV4(const SigV4Request& request, const AwsCredentials& credentials,
                         const SigV4Scope& scope, const std::string& amz_date);

// The amz_date of `unix_seconds` (UTC).
std::string AmzDate(long long unix_seconds);

}  // namespace imgpipe
