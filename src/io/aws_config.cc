#include "io/aws_config.h"

#include <cstdlib>

#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// The variable's value, or "" when unset.
std::string Get(const EnvLookup& env, const char* name) {
  const char* value = env(name);
  return value == nullptr ? "" : value;
}

// The first set and non-empty of the variables.
std::string FirstOf(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    std::string value = Get(env, name);
    if (!value.empty()) return value;
  }
  return "";
}

// The file at `path` parsed, or an empty one when it does not exist.
AwsProfileFile ReadProfileFile(const std::string& path) {
  if (path.empty() || !PathExists(path)) return {};
  return ParseAwsProfileFile(ReadFile(path), path);
}

// The section of `profile`: [NAME] in the credentials file; [profile NAME] (or [default])
// in the config file. nullptr when absent.
const std::map<std::string, std::string>* Section(const AwsProfileFile& file,
                                                  const std::string& profile, bool config) {
  auto it = file.find(config && profile != "default" ? "profile " + profile : profile);
  if (it == file.end() && config) it = file.find(profile);  // some tools write [NAME]
  return it == file.end() ? nullptr : &it->second;
}

std::string Value(const std::map<std::string, std::string>* section, const std::string& key) {
  if (section == nullptr) return "";
  auto it = section->find(key);
  return it == section->end() ? "" : it->second;
}

}  // namespace

AwsProfileFile ParseAwsProfileFile(const std::string& text, const std::string& path) {
  AwsProfileFile file;
  std::map<std::string, std::string>* section = nullptr;
  std::string block;  // the key of an open nested block ("s3 =")
  size_t begin = 0;
  for (int line_number = 1; begin <= text.size(); ++line_number) {
    const size_t line_offset = begin;
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string raw = text.substr(begin, end - begin);
    begin = end + 1;
    const std::string line = Trim(raw);
    auto fail = [&](const std::string& what) {
      throw DataError(path, line_offset, "line " + std::to_string(line_number) + ": " + what);
    };
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      if (line.back() != ']') fail("a section header must end with ']'");
      const std::string name = Trim(line.substr(1, line.size() - 2));
      if (name.empty()) fail("a section needs a name");
      section = &file[name];
      block.clear();
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) fail("expected 'key = value', a [section] or a comment");
    if (section == nullptr) fail("a key before any [section]");
    const std::string key = Trim(line.substr(0, eq));
    const std::string value = Trim(line.substr(eq + 1));
    if (key.empty()) fail("a key must have a name");
    const bool indented = raw[0] == ' ' || raw[0] == '\t';
    if (indented && !block.empty()) {
      (*section)[block + "." + key] = value;
      continue;
    }
    block = value.empty() ? key : "";
    if (!value.empty()) (*section)[key] = value;
  }
  return file;
}

AwsSettings ResolveAwsSettings(const EnvLookup& lookup) {
  const EnvLookup env = lookup ? lookup : EnvLookup([](const char* name) { return std::getenv(name); });
  AwsSettings s;
  // 1. The profile and its two files.
  const std::string named_profile = Get(env, "AWS_PROFILE");
  s.profile = named_profile.empty() ? "default" : named_profile;
  const std::string home = Get(env, "HOME");
  std::string credentials_path = Get(env, "AWS_SHARED_CREDENTIALS_FILE");
  if (credentials_path.empty() && !home.empty()) credentials_path = home + "/.aws/credentials";
  std::string config_path = Get(env, "AWS_CONFIG_FILE");
  if (config_path.empty() && !home.empty()) config_path = home + "/.aws/config";
  const AwsProfileFile credentials_file = ReadProfileFile(credentials_path);
  const AwsProfileFile config_file = ReadProfileFile(config_path);
  const auto* in_credentials = Section(credentials_file, s.profile, false);
  const auto* in_config = Section(config_file, s.profile, true);
  if (!named_profile.empty() && in_credentials == nullptr && in_config == nullptr) {
    throw InvalidArgument("AWS_PROFILE names the profile '" + named_profile + "', which is in neither " +
                          (credentials_path.empty() ? "the credentials file" : credentials_path) +
                          " nor " + (config_path.empty() ? "the config file" : config_path));
  }
  // 2. The credentials: environment, then the credentials file, then the config file.
  const std::string id = Get(env, "AWS_ACCESS_KEY_ID");
  const std::string secret = Get(env, "AWS_SECRET_ACCESS_KEY");
  if (id.empty() != secret.empty()) {
    throw InvalidArgument(std::string("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: only ") +
                          (id.empty() ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID") + " is set");
  }
  if (!id.empty()) {
    s.credentials = {id, secret, Get(env, "AWS_SESSION_TOKEN")};
    s.source = "environment";
  } else {
    for (const auto& [section, path] : {std::pair(in_credentials, credentials_path), std::pair(in_config, config_path)}) {
      const std::string file_id = Value(section, "aws_access_key_id");
      const std::string file_secret = Value(section, "aws_secret_access_key");
      if (file_id.empty() && file_secret.empty()) continue;
      if (file_id.empty() || file_secret.empty()) {
        throw InvalidArgument(path + ": the profile '" + s.profile +
                              "' needs both aws_access_key_id and aws_secret_access_key");
      }
      s.credentials = {file_id, file_secret, Value(section, "aws_session_token")};
      s.source = path + " [" + s.profile + "]";
      break;
    }
  }
  if (s.source.empty()) {
    s.anonymous = true;
    s.source = "anonymous";
  }
  // 3. Region and endpoint.
  s.region = FirstOf(env, {"AWS_REGION", "AWS_DEFAULT_REGION"});
  if (s.region.empty()) s.region = Value(in_config, "region");
  if (s.region.empty()) s.region = "us-east-1";
  s.endpoint_url = FirstOf(env, {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"});
  if (s.endpoint_url.empty()) s.endpoint_url = Value(in_config, "s3.endpoint_url");
  if (s.endpoint_url.empty()) s.endpoint_url = Value(in_config, "endpoint_url");
  const std::string style = Value(in_config, "s3.addressing_style");
  s.path_style = style == "path" || (!s.endpoint_url.empty() && style != "virtual");
  return s;
}

}  // namespace imgpipe
