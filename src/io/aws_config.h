// Where S3 requests get their credentials, region and endpoint: AWS's usual chain, as the
// AWS CLI reads it.
//
//   credentials: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN); else the
//                profile (AWS_PROFILE, else "default") in the shared credentials file
//                (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials), then in the config
//                file (AWS_CONFIG_FILE, else ~/.aws/config, section [profile NAME] or
//                [default]); else anonymous (unsigned requests: public buckets).
//   region:      AWS_REGION, AWS_DEFAULT_REGION, the profile's region, else us-east-1.
//   endpoint:    AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url (or its
//                s3 endpoint_url), else AWS's own. A custom endpoint (MinIO, Ceph, GCS's
//                XML API) is addressed path-style unless s3.addressing_style says virtual.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "io/aws_sigv4.h"

namespace imgpipe {

// An AWS credentials or config file: section name -> key -> value. A nested block
// ("s3 =" followed by indented "key = value" lines) is stored as "s3.key".
using AwsProfileFile = std::map<std::string, std::map<std::string, std::string>>;

// Parses the text of an AWS credentials or config file read from `path`. Comments start
// with '#' or ';'. Throws DataError naming the path, the line's offset and its number for
// a line that is neither a
// section, a key = value, a comment nor blank, or a key before any section. Values are
// never quoted in errors (they may be secrets).
AwsProfileFile ParseAwsProfileFile(const std::string& text, const std::string& path);

// What the chain resolved; `source` says where the credentials came from
// ("environment", "/home/u/.aws/credentials [default]", "anonymous"), never what they are.
struct AwsSettings {
  AwsCredentials credentials;
  bool anonymous = false;  // no credentials: requests go unsigned
  std::string region;
  std::string endpoint_url;  // empty: AWS's endpoint for the region
  bool path_style = false;
  std::string profile;
  std::string source;
};

// The environment as a lookup: the value of a variable, or nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

// Resolves the chain above from `env` (getenv when empty). Throws InvalidArgument when
// only one of AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY is set, when AWS_PROFILE names a
// profile found in neither file, or when the profile has a key id without its secret;
// DataError from ParseAwsProfileFile. Files that do not exist are skipped.
AwsSettings ResolveAwsSettings(const EnvLookup& env = {});

}  // namespace imgpipe
