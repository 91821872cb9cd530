// The little XML that S3's responses need read (listings, errors, upload ids): elements
// found by tag, their text with entities decoded. Not a general XML parser: no
// attributes, namespaces or CDATA; an element's text is what lies between its first
// "<tag>" and the next "</tag>".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace imgpipe {

// An element's text (not decoded) and the offset of its "<tag>" in the searched text.
struct XmlElement {
  std::string_view text;
  size_t offset = 0;
};

// The complete elements <tag>...</tag> in `xml`, in order (an unclosed one ends the
// search). Views into `xml`.
std::vector<XmlElement> XmlElements(std::string_view xml, std::string_view tag);

// `text` with XML's predefined entities and numeric references (as UTF-8) decoded; any
// other '&' kept as it is.
std::string DecodeXml(std::string_view text);

// The decoded text of the first <tag> in `xml`, or "" when there is none.
std::string FirstXmlText(std::string_view xml, std::string_view tag);

}  // namespace imgpipe
