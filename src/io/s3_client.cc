#include "io/s3_client.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "io/aws_sigv4.h"
#include "io/http_byte_source.h"
#include "io/xml_text.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// %XX sequences of `text` decoded ('+' kept: S3 paths and our queries never use it).
std::string PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The request `url` (scheme://host/path?query) as SigV4 sees it: host, decoded path and
// decoded query pairs.
SigV4Request SigV4RequestOf(const HttpRequest& request) {
  SigV4Request r;
  r.method = request.method;
  const std::string& url = request.url;
  const size_t host_begin = url.find("://") + 3;
  const size_t path_begin = std::min(url.find('/', host_begin), url.size());
  r.host = url.substr(host_begin, path_begin - host_begin);
  const size_t query_begin = std::min(url.find('?', path_begin), url.size());
  r.path = path_begin < query_begin ? PercentDecode(url.substr(path_begin, query_begin - path_begin)) : "/";
  for (size_t at = query_begin + 1; at <= url.size() && query_begin < url.size();) {
    const size_t end = std::min(url.find('&', at), url.size());
    const std::string pair = url.substr(at, end - at);
    const size_t eq = pair.find('=');
    if (!pair.empty()) {
      r.query.emplace_back(PercentDecode(pair.substr(0, eq)),
                           eq == std::string::npos ? "" : PercentDecode(pair.substr(eq + 1)));
    }
    at = end + 1;
  }
  return r;
}

// The signer (or bearer token, or nothing) for `options`.
HttpSigner MakeSigner(const S3ClientOptions& options) {
  if (!options.bearer_token.empty()) {
    const std::string header = "Authorization: Bearer " + options.bearer_token;
    return [header](const HttpRequest&, const std::string&) { return std::vector<std::string>{header}; };
  }
  if (options.settings.anonymous) return {};
  const AwsCredentials credentials = options.settings.credentials;
  const SigV4Scope scope{options.settings.region.empty() ? "us-east-1" : options.settings.region, "s3"};
  return [credentials, scope](const HttpRequest& request, const std::string& payload_sha256) {
    SigV4Request r = SigV4RequestOf(request);
    r.payload_sha256 = payload_sha256;
    const long long now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const SigV4Signature signature = SignSigV4(r, credentials, scope, AmzDate(now));
    std::vector<std::string> headers;
    for (const auto& [name, value] : signature.added_headers) headers.push_back(name + ": " + value);
    headers.push_back("Authorization: " + signature.authorization);
    return headers;
  };
}

// "bytes" as a decimal count, or DataError naming `url` and `offset` (signs, spaces and
// counts past 2^64 - 1 refused).
uint64_t ParseSize(const std::string& text, const std::string& url, size_t offset) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long size = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos ||
      errno == ERANGE) {
    throw DataError(url, offset, "ListObjectsV2: Size '" + text.substr(0, 40) + "' is not a byte count");
  }
  return size;
}

}  // namespace

ObjectUrl ParseObjectUrl(const std::string& url) {
  const size_t colon = url.find("://");
  ObjectUrl o;
  if (colon != std::string::npos) o.scheme = url.substr(0, colon);
  if (o.scheme != "s3" && o.scheme != "gs") {
    throw InvalidArgument(url + ": not an s3:// or gs:// URL");
  }
  const std::string rest = url.substr(colon + 3);
  const size_t slash = rest.find('/');
  o.bucket = rest.substr(0, slash);
  o.key = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (o.bucket.empty()) throw InvalidArgument(url + ": no bucket (" + o.scheme + "://BUCKET/PREFIX)");
  return o;
}

S3ListPage ParseListObjectsV2(std::string_view xml, const std::string& url) {
  if (xml.find("<ListBucketResult") == std::string_view::npos) {
    throw DataError(url, 0, "not a ListObjectsV2 response (no <ListBucketResult>): '" +
                                std::string(xml.substr(0, 80)) + "'");
  }
  S3ListPage page;
  for (const XmlElement& contents : XmlElements(xml, "Contents")) {
    const std::vector<XmlElement> key = XmlElements(contents.text, "Key");
    if (key.empty()) throw DataError(url, contents.offset, "ListObjectsV2: an object without <Key>");
    S3Object object;
    object.key = DecodeXml(key.front().text);
    object.size = ParseSize(FirstXmlText(contents.text, "Size"), url, contents.offset);
    object.etag = FirstXmlText(contents.text, "ETag");
    page.objects.push_back(std::move(object));
  }
  for (const XmlElement& common : XmlElements(xml, "CommonPrefixes")) {
    page.common_prefixes.push_back(FirstXmlText(common.text, "Prefix"));
  }
  page.truncated = FirstXmlText(xml, "IsTruncated") == "true";
  page.next_token = FirstXmlText(xml, "NextContinuationToken");
  if (page.truncated && page.next_token.empty()) {
    throw DataError(url, 0, "ListObjectsV2: a truncated page without NextContinuationToken");
  }
  return page;
}

S3Client::S3Client(S3ClientOptions options)
    : options_(std::move(options)), client_(std::make_shared<const HttpClient>(options_.http, MakeSigner(options_))) {
  if (options_.part_size < (5ull << 20)) throw InvalidArgument("S3 part_size must be at least 5 MiB");
}

std::string S3Client::HttpUrl(const std::string& bucket, const std::string& key, const std::string& query) const {
  const AwsSettings& s = options_.settings;
  std::string endpoint = s.endpoint_url;
  if (endpoint.empty()) endpoint = "https://s3." + (s.region.empty() ? std::string("us-east-1") : s.region) + ".amazonaws.com";
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  std::string url;
  if (s.path_style) {
    url = endpoint + "/" + AwsUriEncode(bucket, true) + "/" + AwsUriEncode(key, false);
  } else {
    const size_t host = endpoint.find("://");
    const size_t at = host == std::string::npos ? 0 : host + 3;
    url = endpoint.substr(0, at) + bucket + "." + endpoint.substr(at) + "/" + AwsUriEncode(key, false);
  }
  return query.empty() ? url : url + "?" + query;
}

std::unique_ptr<ByteSource> S3Client::Open(const std::string& bucket, const std::string& key,
                                           const std::string& name, HttpByteSource::Open open) const {
  return std::make_unique<HttpByteSource>(HttpUrl(bucket, key), client_, name, open);
}

std::vector<S3Object> S3Client::List(const std::string& bucket, const std::string& prefix,
                                     const std::string& delimiter) const {
  std::vector<S3Object> objects;
  std::string token;
  do {
    std::string query = "list-type=2&max-keys=" + std::to_string(options_.list_page_size) +
                        "&prefix=" + AwsUriEncode(prefix, true);
    if (!delimiter.empty()) query += "&delimiter=" + AwsUriEncode(delimiter, true);
    if (!token.empty()) query += "&continuation-token=" + AwsUriEncode(token, true);
    HttpRequest get;
    get.url = HttpUrl(bucket, "", query);
    const S3ListPage page = ParseListObjectsV2(client_->Perform(get).body, get.url);
    objects.insert(objects.end(), page.objects.begin(), page.objects.end());
    if (page.truncated && page.next_token == token) {
      throw DataError(get.url, 0, "ListObjectsV2: the continuation token did not change");
    }
    token = page.truncated ? page.next_token : "";
  } while (!token.empty());
  std::sort(objects.begin(), objects.end(), [](const S3Object& a, const S3Object& b) { return a.key < b.key; });
  return objects;
}

bool S3Client::Exists(const std::string& bucket, const std::string& key) const {
  return client_->Exists(HttpUrl(bucket, key));
}

void S3Client::Delete(const std::string& bucket, const std::string& key) const {
  HttpRequest remove;
  remove.method = "DELETE";
  remove.url = HttpUrl(bucket, key);
  try {
    client_->Perform(remove);
  } catch (const HttpError& e) {
    if (e.status() != 404) throw;  // S3 answers 204 for a missing key, GCS 404
  }
}

std::string S3Client::Get(const std::string& bucket, const std::string& key) const {
  HttpRequest get;
  get.url = HttpUrl(bucket, key);
  return client_->Perform(get).body;
}

void S3Client::Put(const std::string& bucket, const std::string& key, std::string_view data) const {
  if (data.size() > options_.multipart_threshold) return PutMultipart(bucket, key, data);
  HttpRequest put;
  put.method = "PUT";
  put.url = HttpUrl(bucket, key);
  put.body = data;
  client_->Perform(put);
}

void S3Client::PutMultipart(const std::string& bucket, const std::string& key, std::string_view data) const {
  // 1. Start the upload.
  HttpRequest start;
  start.method = "POST";
  start.url = HttpUrl(bucket, key, "uploads=");
  const std::string upload_id = FirstXmlText(client_->Perform(start).body, "UploadId");
  if (upload_id.empty()) throw DataError(start.url, 0, "CreateMultipartUpload: no <UploadId> in the response");
  const std::string id_query = "uploadId=" + AwsUriEncode(upload_id, true);
  try {
    // 2. The parts, each retried on its own; their ETags for the completion.
    std::string complete = "<CompleteMultipartUpload>";
    int number = 1;
    for (uint64_t offset = 0; offset < data.size(); offset += options_.part_size, ++number) {
      HttpRequest part;
      part.method = "PUT";
      part.url = HttpUrl(bucket, key, "partNumber=" + std::to_string(number) + "&" + id_query);
      part.body = data.substr(offset, options_.part_size);
      const HttpResponse r = client_->Perform(part);
      if (r.etag.empty()) throw DataError(part.url, offset, "UploadPart: no ETag in the response");
      complete += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" + r.etag + "</ETag></Part>";
    }
    complete += "</CompleteMultipartUpload>";
    // 3. Complete it: the object appears now, whole. S3 may answer 200 with an error body.
    HttpRequest finish;
    finish.method = "POST";
    finish.url = HttpUrl(bucket, key, id_query);
    finish.body = complete;
    const std::string answer = client_->Perform(finish).body;
    const std::string error = DescribeXmlError(answer);
    if (!error.empty()) throw HttpError(finish.url, 200, "CompleteMultipartUpload failed: " + error);
  } catch (...) {
    // 4. On failure, abort, so no parts are left behind (best effort).
    try {
      HttpRequest abort;
      abort.method = "DELETE";
      abort.url = HttpUrl(bucket, key, id_query);
      client_->Perform(abort);
    } catch (const Error&) {
    }
    throw;
  }
}

}  // namespace imgpipe
