#include "io/s3_client.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "io/aws_sigv4.h"
#include "io/http_byte_source.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// XML's predefined entities and numeric references in `text` decoded (others kept).
std::string DecodeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const size_t semi = text[i] == '&' ? text.find(';', i) : std::string_view::npos;
    if (semi == std::string_view::npos || semi - i > 10) {
      out += text[i];
      continue;
    }
    const std::string_view name = text.substr(i + 1, semi - i - 1);
    static const std::pair<std::string_view, char> kNamed[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    bool decoded = false;
    for (const auto& [entity, c] : kNamed) {
      if (name == entity) out += c, decoded = true;
    }
    if (!decoded && name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x';
      const std::string digits(name.substr(hex ? 2 : 1));
      char* end = nullptr;
      const unsigned long code = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
      if (!digits.empty() && *end == '\0' && code > 0 && code < 0x110000) {
        if (code < 0x80) {  // UTF-8
          out += static_cast<char>(code);
        } else if (code < 0x800) {
          out += static_cast<char>(0xC0 | (code >> 6));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
          out += static_cast<char>(0xE0 | (code >> 12));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          out += static_cast<char>(0xF0 | (code >> 18));
          out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        }
        decoded = true;
      }
    }
    if (!decoded) {
      out += text[i];
      continue;
    }
    i = semi;
  }
  return out;
}

// The elements <tag>...</tag> in `xml` from `from`, in order: each one's text and offset.
struct XmlElement {
  std::string_view text;
  size_t offset = 0;
};
std::vector<XmlElement> XmlElements(std::string_view xml, std::string_view tag) {
  const std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
  std::vector<XmlElement> elements;
  for (size_t at = xml.find(open); at != std::string_view::npos; at = xml.find(open, at)) {
    const size_t end = xml.find(close, at + open.size());
    if (end == std::string_view::npos) break;
    elements.push_back({xml.substr(at + open.size(), end - at - open.size()), at});
    at = end + close.size();
  }
  return elements;
}

// The text of the first <tag> in `xml`, or "" when there is none.
std::string FirstText(std::string_view xml, std::string_view tag) {
  const std::vector<XmlElement> found = XmlElements(xml, tag);
  return found.empty() ? "" : DecodeXml(found.front().text);
}

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
    object.size = ParseSize(FirstText(contents.text, "Size"), url, contents.offset);
    object.etag = FirstText(contents.text, "ETag");
    page.objects.push_back(std::move(object));
  }
  for (const XmlElement& common : XmlElements(xml, "CommonPrefixes")) {
    page.common_prefixes.push_back(FirstText(common.text, "Prefix"));
  }
  page.truncated = FirstText(xml, "IsTruncated") == "true";
  page.next_token = FirstText(xml, "NextContinuationToken");
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
                                           const std::string& name) const {
  return std::make_unique<HttpByteSource>(HttpUrl(bucket, key), client_, name);
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
  HttpRequest head;
  head.method = "HEAD";
  head.url = HttpUrl(bucket, key);
  try {
    client_->Perform(head);
    return true;
  } catch (const HttpError& e) {
    if (e.status() == 404) return false;
    throw;
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
  const std::string upload_id = FirstText(client_->Perform(start).body, "UploadId");
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
