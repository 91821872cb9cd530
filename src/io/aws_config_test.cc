#include "io/aws_config.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <string>

#include "io/io_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

void Write(const std::string& path, const std::string& text) { WriteFileAtomic(path, text, false); }

// An environment of exactly these variables.
EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(AwsConfigTest, ParsesSectionsCommentsAndNestedBlocks) {
  const AwsProfileFile f = ParseAwsProfileFile(
      "# comment\n[default]\naws_access_key_id = AKID\n; another\naws_secret_access_key=SECRET \n\n"
      "[profile minio]\nregion = eu-west-1\ns3 =\n  endpoint_url = http://127.0.0.1:9000\n"
      "  addressing_style = path\noutput = json",
      "config");
  EXPECT_EQ(f.at("default").at("aws_access_key_id"), "AKID");
  EXPECT_EQ(f.at("default").at("aws_secret_access_key"), "SECRET");
  EXPECT_EQ(f.at("profile minio").at("region"), "eu-west-1");
  EXPECT_EQ(f.at("profile minio").at("s3.endpoint_url"), "http://127.0.0.1:9000");
  EXPECT_EQ(f.at("profile minio").at("s3.addressing_style"), "path");
  EXPECT_EQ(f.at("profile minio").at("output"), "json");
  EXPECT_EQ(f.at("profile minio").count("s3"), 0u);
}

TEST(AwsConfigTest, BadLinesNameTheFileAndLineNotTheValue) {
  const struct {
    const char* text;
    const char* where;
  } cases[] = {{"[default]\naws_secret_access_key SECRETVALUE\n", "creds: offset 10: line 2:"},
               {"aws_secret_access_key = SECRETVALUE\n", "creds: offset 0: line 1:"},
               {"[default\n", "creds: offset 0: line 1:"},
               {"[]\n", "creds: offset 0: line 1:"},
               {"[default]\n = SECRETVALUE\n", "creds: offset 10: line 2:"}};
  for (const auto& c : cases) {
    try {
      ParseAwsProfileFile(c.text, "creds");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const DataError& e) {
      EXPECT_EQ(std::string(e.what()).find(c.where), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find("SECRETVALUE"), std::string::npos) << e.what();
    }
  }
}

TEST(AwsConfigTest, EnvironmentComesFirst) {
  const std::string dir = ScratchDir("aws_config_env");
  Write(dir + "/credentials", "[default]\naws_access_key_id = FILEID\naws_secret_access_key = FILESECRET\n");
  const AwsSettings s = ResolveAwsSettings(Env({{"AWS_ACCESS_KEY_ID", "ENVID"},
                                                {"AWS_SECRET_ACCESS_KEY", "ENVSECRET"},
                                                {"AWS_SESSION_TOKEN", "TOKEN"},
                                                {"AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials"},
                                                {"AWS_DEFAULT_REGION", "eu-central-1"}}));
  EXPECT_EQ(s.credentials.access_key_id, "ENVID");
  EXPECT_EQ(s.credentials.secret_access_key, "ENVSECRET");
  EXPECT_EQ(s.credentials.session_token, "TOKEN");
  EXPECT_EQ(s.source, "environment");
  EXPECT_FALSE(s.anonymous);
  EXPECT_EQ(s.region, "eu-central-1");
  EXPECT_EQ(s.endpoint_url, "");
  EXPECT_FALSE(s.path_style);
}

TEST(AwsConfigTest, ProfileFromTheFilesUnderHome) {
  const std::string home = ScratchDir("aws_config_home");
  MakeDirectories(home + "/.aws");
  Write(home + "/.aws/credentials",
            "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n"
            "[minio]\naws_access_key_id = M\naws_secret_access_key = MS\n");
  Write(home + "/.aws/config",
            "[default]\nregion = us-west-2\n[profile minio]\nregion = local\n"
            "endpoint_url = http://127.0.0.1:9000\n[profile virtual]\nendpoint_url = http://h\n"
            "aws_access_key_id = V\naws_secret_access_key = VS\ns3 =\n  addressing_style = virtual\n");
  const AwsSettings d = ResolveAwsSettings(Env({{"HOME", home}}));
  EXPECT_EQ(d.profile, "default");
  EXPECT_EQ(d.credentials.access_key_id, "D");
  EXPECT_EQ(d.region, "us-west-2");
  EXPECT_EQ(d.source, home + "/.aws/credentials [default]");

  const AwsSettings m = ResolveAwsSettings(Env({{"HOME", home}, {"AWS_PROFILE", "minio"}}));
  EXPECT_EQ(m.credentials.access_key_id, "M");
  EXPECT_EQ(m.credentials.secret_access_key, "MS");
  EXPECT_EQ(m.region, "local");
  EXPECT_EQ(m.endpoint_url, "http://127.0.0.1:9000");
  EXPECT_TRUE(m.path_style);

  // Credentials in the config file; the endpoint variable wins over the profile's.
  const AwsSettings v = ResolveAwsSettings(
      Env({{"HOME", home}, {"AWS_PROFILE", "virtual"}, {"AWS_ENDPOINT_URL", "http://127.0.0.1:1"}}));
  EXPECT_EQ(v.credentials.access_key_id, "V");
  EXPECT_EQ(v.source, home + "/.aws/config [virtual]");
  EXPECT_EQ(v.endpoint_url, "http://127.0.0.1:1");
  EXPECT_FALSE(v.path_style);
  EXPECT_EQ(v.region, "us-east-1");
}

TEST(AwsConfigTest, NoCredentialsIsAnonymous) {
  const AwsSettings s = ResolveAwsSettings(Env({{"HOME", ScratchDir("aws_config_empty")}}));
  EXPECT_TRUE(s.anonymous);
  EXPECT_EQ(s.source, "anonymous");
  EXPECT_EQ(s.region, "us-east-1");
}

TEST(AwsConfigTest, HalfConfiguredIsAnErrorWithoutTheSecret) {
  const std::string home = ScratchDir("aws_config_half");
  MakeDirectories(home + "/.aws");
  Write(home + "/.aws/credentials", "[default]\naws_secret_access_key = HIDDENSECRET\n");
  for (const auto& env : {Env({{"HOME", home}, {"AWS_SECRET_ACCESS_KEY", "HIDDENSECRET"}}),
                          Env({{"HOME", home}}), Env({{"HOME", home}, {"AWS_PROFILE", "nope"}})}) {
    try {
      ResolveAwsSettings(env);
      ADD_FAILURE() << "accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()).find("HIDDENSECRET"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace imgpipe
