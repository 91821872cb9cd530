#include "io/aws_sigv4.h"

#include <gtest/gtest.h>

#include <string>

#include "util/error.h"

namespace imgpipe {
namespace {

// AWS's signature test suite (aws-sig-v4-test-suite, published with the SigV4
// documentation): its key pair, scope, date and host. It signs without
// x-amz-content-sha256. Its vectors whose paths S3 would sign differently (the generic
// services normalise "//" and "." and encode twice; S3 does neither) are left out.
const AwsCredentials kSuiteKey = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const SigV4Scope kSuiteScope = {"us-east-1", "service"};
constexpr const char* kSuiteDate = "20150830T123600Z";

SigV4Request SuiteRequest(const std::string& method = "GET", const std::string& path = "/") {
  SigV4Request r;
  r.method = method;
  r.host = "example.amazonaws.com";
  r.path = path;
  r.payload_header = false;
  return r;
}

std::string SuiteAuthorization(const std::string& signed_headers, const std::string& signature) {
  return "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
         "SignedHeaders=" + signed_headers + ", Signature=" + signature;
}

TEST(AwsSigV4Test, SuiteGetVanilla) {
  const SigV4Signature s = SignSigV4(SuiteRequest(), kSuiteKey, kSuiteScope, kSuiteDate);
  EXPECT_EQ(s.canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(s.string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  EXPECT_EQ(s.authorization,
            SuiteAuthorization("host;x-amz-date",
                               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
  ASSERT_EQ(s.added_headers.size(), 1u);
  EXPECT_EQ(s.added_headers[0], (std::pair<std::string, std::string>("x-amz-date", kSuiteDate)));
}

TEST(AwsSigV4Test, SuiteUnreservedPath) {
  const SigV4Signature s = SignSigV4(
      SuiteRequest("GET", "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
      kSuiteKey, kSuiteScope, kSuiteDate);
  EXPECT_EQ(s.signature, "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f");
}

TEST(AwsSigV4Test, SuiteQueriesSortByNameThenValue) {
  SigV4Request keys = SuiteRequest();
  keys.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  const SigV4Signature k = SignSigV4(keys, kSuiteKey, kSuiteScope, kSuiteDate);
  EXPECT_NE(k.canonical_request.find("\nParam1=value1&Param2=value2\n"), std::string::npos);
  EXPECT_EQ(k.signature, "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
  EXPECT_EQ(k.string_to_sign.substr(k.string_to_sign.rfind('\n') + 1),
            "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0");

  SigV4Request values = SuiteRequest();
  values.query = {{"Param1", "value2"}, {"Param1", "value1"}};
  EXPECT_EQ(SignSigV4(values, kSuiteKey, kSuiteScope, kSuiteDate).signature,
            "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694");

  SigV4Request utf8 = SuiteRequest();
  utf8.query = {{"\xE1\x88\xB4", "bar"}};  // U+1234
  const SigV4Signature u = SignSigV4(utf8, kSuiteKey, kSuiteScope, kSuiteDate);
  EXPECT_NE(u.canonical_request.find("\n%E1%88%B4=bar\n"), std::string::npos);
  EXPECT_EQ(u.signature, "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04");
}

TEST(AwsSigV4Test, SuiteHeadersJoinTrimAndSort) {
  SigV4Request order = SuiteRequest();
  order.headers = {{"My-Header1", "value4"}, {"My-Header1", "value1"}, {"My-Header1", "value3"},
                   {"My-Header1", "value2"}};
  const SigV4Signature o = SignSigV4(order, kSuiteKey, kSuiteScope, kSuiteDate);
  EXPECT_NE(o.canonical_request.find("my-header1:value4,value1,value3,value2\n"), std::string::npos);
  EXPECT_EQ(o.authorization,
            SuiteAuthorization("host;my-header1;x-amz-date",
                               "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"));

  SigV4Request duplicate = SuiteRequest();
  duplicate.headers = {{"My-Header1", "value2"}, {"My-Header1", "value2"}, {"My-Header1", "value1"}};
  EXPECT_EQ(SignSigV4(duplicate, kSuiteKey, kSuiteScope, kSuiteDate).signature,
            "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea");

  SigV4Request trim = SuiteRequest();
  trim.headers = {{"My-Header1", " value1"}, {"My-Header2", "\"a   b   c\""}};
  const SigV4Signature t = SignSigV4(trim, kSuiteKey, kSuiteScope, kSuiteDate);
  EXPECT_NE(t.canonical_request.find("my-header1:value1\nmy-header2:\"a b c\"\n"), std::string::npos);
  EXPECT_EQ(t.signature, "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736");
}

TEST(AwsSigV4Test, SuitePostWithABody) {
  SigV4Request post = SuiteRequest("POST");
  post.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  post.payload_sha256 = Sha256Hex("Param1=value1");
  EXPECT_EQ(post.payload_sha256, "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  const SigV4Signature s = SignSigV4(post, kSuiteKey, kSuiteScope, kSuiteDate);
  EXPECT_EQ(s.string_to_sign.substr(s.string_to_sign.rfind('\n') + 1),
            "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281");
  EXPECT_EQ(s.authorization,
            SuiteAuthorization("content-type;host;x-amz-date",
                               "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"));
}

// The S3 documentation's examples (examplebucket, 24 May 2013): they send and sign
// x-amz-content-sha256, as S3 requires.
const AwsCredentials kS3Key = {"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
const SigV4Scope kS3Scope = {"us-east-1", "s3"};

SigV4Request S3Request(const std::string& path) {
  SigV4Request r;
  r.host = "examplebucket.s3.amazonaws.com";
  r.path = path;
  return r;
}

TEST(AwsSigV4Test, S3GetObjectWithARange) {
  SigV4Request get = S3Request("/test.txt");
  get.headers = {{"Range", "bytes=0-9"}};
  const SigV4Signature s = SignSigV4(get, kS3Key, kS3Scope, "20130524T000000Z");
  EXPECT_EQ(s.canonical_request,
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(s.string_to_sign.substr(s.string_to_sign.rfind('\n') + 1),
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(s.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(s.added_headers.size(), 2u);  // x-amz-date, x-amz-content-sha256
}

TEST(AwsSigV4Test, S3ListingAndSubresource) {
  SigV4Request list = S3Request("/");
  list.query = {{"prefix", "J"}, {"max-keys", "2"}};
  const SigV4Signature l = SignSigV4(list, kS3Key, kS3Scope, "20130524T000000Z");
  EXPECT_EQ(l.string_to_sign.substr(l.string_to_sign.rfind('\n') + 1),
            "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7");
  EXPECT_EQ(l.signature, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");

  SigV4Request lifecycle = S3Request("/");
  lifecycle.query = {{"lifecycle", ""}};
  EXPECT_EQ(SignSigV4(lifecycle, kS3Key, kS3Scope, "20130524T000000Z").signature,
            "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

// S3 keys keep "//" and "." segments and are encoded once ("%" included).
TEST(AwsSigV4Test, S3PathsAreEncodedOnceAndNotNormalised) {
  EXPECT_EQ(AwsUriEncode("/a b/./c//d%2F+~", false), "/a%20b/./c//d%252F%2B~");
  EXPECT_EQ(AwsUriEncode("a/b", true), "a%2Fb");
  const SigV4Signature s = SignSigV4(S3Request("/shards//train-0.tfrecord"), kS3Key, kS3Scope,
                                     "20130524T000000Z");
  EXPECT_EQ(s.canonical_request.substr(0, 31), "GET\n/shards//train-0.tfrecord\n\n");
}

// A session token goes out as x-amz-security-token and is signed; the secret appears in
// nothing the signer returns.
TEST(AwsSigV4Test, SessionTokenIsSignedAndSecretsStayOut) {
  AwsCredentials temporary = kS3Key;
  temporary.session_token = "FQoGZXIvYXdzEXAMPLETOKEN";
  const SigV4Signature with = SignSigV4(S3Request("/test.txt"), temporary, kS3Scope, "20130524T000000Z");
  const SigV4Signature without = SignSigV4(S3Request("/test.txt"), kS3Key, kS3Scope, "20130524T000000Z");
  EXPECT_NE(with.authorization.find("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"),
            std::string::npos)
      << with.authorization;
  EXPECT_NE(with.signature, without.signature);
  EXPECT_EQ(with.added_headers.back(),
            (std::pair<std::string, std::string>("x-amz-security-token", temporary.session_token)));
  for (const std::string& text : {with.canonical_request, with.string_to_sign, with.authorization}) {
    EXPECT_EQ(text.find(temporary.secret_access_key), std::string::npos);
  }
}

TEST(AwsSigV4Test, BadInputsAreInvalidArguments) {
  EXPECT_THROW(SignSigV4(S3Request("/x"), kS3Key, kS3Scope, "2013-05-24"), InvalidArgument);
  EXPECT_THROW(SignSigV4(S3Request("/x"), {"id", "", ""}, kS3Scope, "20130524T000000Z"), InvalidArgument);
  EXPECT_THROW(SignSigV4(S3Request("/x"), kS3Key, {"", "s3"}, "20130524T000000Z"), InvalidArgument);
  SigV4Request no_host = S3Request("/x");
  no_host.host.clear();
  EXPECT_THROW(SignSigV4(no_host, kS3Key, kS3Scope, "20130524T000000Z"), InvalidArgument);
  for (const char* owned : {"Authorization", "HOST", "X-Amz-Date", "x-amz-content-sha256"}) {
    SigV4Request r = S3Request("/x");
    r.headers = {{owned, "v"}};
    try {
      SignSigV4(r, kS3Key, kS3Scope, "20130524T000000Z");
      ADD_FAILURE() << owned << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(owned), std::string::npos) << e.what();
    }
  }
}

TEST(AwsSigV4Test, AmzDateIsUtc) {
  EXPECT_EQ(AmzDate(1369353600), "20130524T000000Z");
  EXPECT_EQ(AmzDate(1440938160), "20150830T123600Z");
}

}  // namespace
}  // namespace imgpipe
