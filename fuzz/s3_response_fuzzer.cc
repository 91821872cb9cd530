// Fuzzes what imgpipe parses from an object store's answers. The input up to its first NUL
// byte is a response body, given to ParseListObjectsV2 (a listing page) and to
// DescribeXmlError (an error body), and as a header value to ParseContentRange; what
// follows the NUL, when there is one, is a shard pattern for ExpandBraces. Besides "only imgpipe::Error escapes" (DescribeXmlError may
// not throw at all), it checks:
//   - a page parses only from a <ListBucketResult>, with one object per complete
//     <Contents> element (each with a complete <Key>) and one prefix per complete
//     <CommonPrefixes>; a Size is the number its text says (not a negative number wrapped
//     around, not a saturated overflow); decoding entities never lengthens a key or an
//     ETag, and a key without '&' is its text; a truncated page has a token; a
//     refused page's DataError names the URL and an offset inside the body;
//   - an error description is "" unless the body has <Error> and a <Code>, whose text
//     it starts with;
//   - a Content-Range parses only as "bytes FIRST-LAST/TOTAL" (or "/*") with FIRST <= LAST
//     < TOTAL, and its canonical text parses to the same;
//   - ExpandBraces returns as many names as the product of its groups' choices, none of
//     them with a brace. Patterns whose product exceeds kMaxNames are skipped: the
//     function checks the 1,000,000-name limit only after building the names (so
//     "{0..999}{0..999}{0..999}" builds 10^9 of them first).
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "io/http_client.h"
#include "io/s3_client.h"
#include "io/storage.h"

namespace imgpipe {
namespace {

constexpr uint64_t kMaxNames = 10000;

// The text of each complete <tag>...</tag> in `xml`, in order, as S3's listing is read:
// from each opening tag to the next closing one.
std::vector<std::string_view> Elements(std::string_view xml, std::string_view tag) {
  const std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
  std::vector<std::string_view> found;
  size_t at = xml.find(open);
  while (at != std::string_view::npos) {
    const size_t end = xml.find(close, at + open.size());
    if (end == std::string_view::npos) break;
    found.push_back(xml.substr(at + open.size(), end - at - open.size()));
    at = xml.find(open, end + close.size());
  }
  return found;
}

// The raw text of the first complete <tag> in `xml`, or "" when there is none.
std::string_view First(std::string_view xml, std::string_view tag) {
  const std::vector<std::string_view> found = Elements(xml, tag);
  return found.empty() ? std::string_view() : found.front();
}

// Checks that `size` is the value of `text` as strtoull reads it (leading white space, a
// sign, digits to the end): no overflow, and no negative number other than zero.
void CheckSize(std::string_view text, uint64_t size) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const bool negative = i < text.size() && text[i] == '-';
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  uint64_t value = 0;
  bool overflow = false;
  for (; i < text.size(); ++i) {
    FUZZ_CHECK(std::isdigit(static_cast<unsigned char>(text[i])));
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    overflow = overflow || value > (UINT64_MAX - digit) / 10;
    value = value * 10 + digit;
  }
  FUZZ_CHECK(!overflow);
  FUZZ_CHECK(!negative || value == 0);
  FUZZ_CHECK(size == value);
}

// Checks a page that ParseListObjectsV2 accepted against the body it came from.
void CheckPage(std::string_view xml, const S3ListPage& page) {
  FUZZ_CHECK(xml.find("<ListBucketResult") != std::string_view::npos);
  const std::vector<std::string_view> contents = Elements(xml, "Contents");
  FUZZ_CHECK(page.objects.size() == contents.size());
  for (size_t i = 0; i < contents.size(); ++i) {
    const S3Object& object = page.objects[i];
    const std::vector<std::string_view> keys = Elements(contents[i], "Key");
    FUZZ_CHECK(!keys.empty());
    FUZZ_CHECK(object.key.size() <= keys.front().size());
    if (keys.front().find('&') == std::string_view::npos) FUZZ_CHECK(object.key == keys.front());
    const std::string_view size = First(contents[i], "Size");
    if (size.find('&') == std::string_view::npos) CheckSize(size, object.size);
    FUZZ_CHECK(object.etag.size() <= First(contents[i], "ETag").size());
  }
  FUZZ_CHECK(page.common_prefixes.size() == Elements(xml, "CommonPrefixes").size());
  const std::string_view truncated = First(xml, "IsTruncated");
  if (truncated.find('&') == std::string_view::npos) FUZZ_CHECK(page.truncated == (truncated == "true"));
  if (page.truncated) FUZZ_CHECK(!page.next_token.empty());
}

// Checks DescribeXmlError's answer: "" unless the body is an <Error> with a <Code>; else
// the code's text first.
void CheckErrorDescription(std::string_view body, const std::string& description) {
  if (description.empty()) return;
  FUZZ_CHECK(body.find("<Error>") != std::string_view::npos);
  const std::string code_start = description.substr(0, description.find(": "));
  FUZZ_CHECK(body.find("<Code>" + code_start) != std::string_view::npos);
}

// How many names ExpandBraces(pattern) gives, grouping as it does (the first '{', the first
// '}' after it, then the rest), saturated at kMaxNames + 1; it stops counting at a group
// that ExpandBraces refuses (a range not of decimal numbers, empty or over 1,000,000 names),
// where the expansion throws before building names.
uint64_t CountNames(const std::string& pattern) {
  uint64_t product = 1;
  for (size_t at = 0;;) {
    const size_t open = pattern.find('{', at);
    if (open == std::string::npos) return product;
    const size_t close = pattern.find('}', open);
    if (close == std::string::npos) return product;
    const std::string body = pattern.substr(open + 1, close - open - 1);
    uint64_t choices = 1;
    const size_t dots = body.find("..");
    if (dots != std::string::npos) {
      const std::string first = body.substr(0, dots), last = body.substr(dots + 2);
      for (const std::string& bound : {first, last}) {
        if (bound.empty() || bound.size() > 9 || bound.find_first_not_of("0123456789") != std::string::npos) {
          return product;
        }
      }
      const uint64_t a = std::stoull(first), b = std::stoull(last);
      if (b < a || b - a >= 1000000) return product;
      choices = b - a + 1;
    } else {
      for (char c : body) choices += c == ',';
    }
    product = product > (kMaxNames + 1) / choices ? kMaxNames + 1 : product * choices;
    at = close + 1;
  }
}

// Expands `pattern` when it gives at most kMaxNames names and checks them.
void CheckExpandBraces(const std::string& pattern) {
  const uint64_t expected = CountNames(pattern);
  if (expected > kMaxNames) return;
  fuzz::IgnoringErrors([&] {
    const std::vector<std::string> names = ExpandBraces(pattern);
    FUZZ_CHECK(names.size() == expected);
    for (const std::string& name : names) {
      FUZZ_CHECK(name.find_first_of("{}") == std::string::npos);
    }
  });
}

// ParseContentRange(value): when it parses, FIRST <= LAST < TOTAL, and the canonical text
// of what it read parses to the same; a value with a character outside "bytes 0-9-/*" and
// blanks never parses.
void CheckContentRange(std::string_view value) {
  const std::optional<ContentRange> range = ParseContentRange(value);
  if (!range) return;
  FUZZ_CHECK(range->first <= range->last);
  FUZZ_CHECK(!range->total || range->last < *range->total);
  const std::string canonical = "bytes " + std::to_string(range->first) + "-" + std::to_string(range->last) + "/" +
                                (range->total ? std::to_string(*range->total) : "*");
  const std::optional<ContentRange> again = ParseContentRange(canonical);
  FUZZ_CHECK(again && again->first == range->first && again->last == range->last && again->total == range->total);
  for (char c : value) FUZZ_CHECK(std::string_view("bytes 0123456789-/*\t").find(c) != std::string_view::npos);
}

}  // namespace
}  // namespace imgpipe

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  const std::string_view input = fuzz::AsView(data, size);
  const size_t nul = input.find('\0');
  const std::string_view body = input.substr(0, nul);
  const std::string url = "https://s3.fuzz.example/bucket?list-type=2";

  fuzz::IgnoringErrors([&] {
    try {
      CheckPage(body, ParseListObjectsV2(body, url));
    } catch (const DataError& e) {
      FUZZ_CHECK(e.path() == url && e.offset().has_value() && *e.offset() <= body.size());
      throw;
    }
  });
  CheckErrorDescription(body, DescribeXmlError(body));
  CheckContentRange(body);
  if (nul != std::string_view::npos) CheckExpandBraces(std::string(input.substr(nul + 1)));
  return 0;
}
