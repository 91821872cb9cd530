#include "io/xml_text.h"

#include <cstdlib>
#include <utility>

namespace imgpipe {

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

std::string FirstXmlText(std::string_view xml, std::string_view tag) {
  const std::vector<XmlElement> found = XmlElements(xml, tag);
  return found.empty() ? "" : DecodeXml(found.front().text);
}

}  // namespace imgpipe
