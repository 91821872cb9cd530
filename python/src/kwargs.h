// Keyword options of imgpipe's Python functions, read into C++ fields the Python way:
// an unknown keyword or a value of the wrong type raises imgpipe.ArgumentTypeError (a
// TypeError, as Python's own functions raise), naming the option and the type expected;
// a bad value is the library's InvalidArgument (imgpipe.InvalidArgument, a ValueError).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include "errors.h"
#include "loader/loader_options.h"

namespace imgpipe::python {

// The Python name of C++ type T, for "expected int" messages (the Loader options' names).
template <typename T>
const char* PythonTypeName() {
  return loader::OptionTypeName<T>();
}

// Reads keyword options into C++ fields; each name read is remembered so that Finish
// can name an unknown one.
class KwargsReader {
 public:
  KwargsReader(const char* function, const pybind11::kwargs& kwargs) : function_(function), kwargs_(kwargs) {}

  // field = kwargs[name] when given (unset: the field keeps its C++ default).
  template <typename T>
  void Read(const char* name, T& field) {
    ReadParsed<T>(name, field, [](const T& value) { return value; });
  }

  // field = parse(kwargs[name] as Text) when given; ArgumentTypeError when the value is
  // not a Text (a bool is not taken for an int, nor an int for a bool).
  template <typename Text, typename T, typename Parse>
  void ReadParsed(const char* name, T& field, Parse parse) {
    names_.insert(name);
    if (!kwargs_.contains(name)) return;
    const pybind11::object value = kwargs_[name];
    std::optional<Text> text;
    if (!IsBoolMismatch<Text>(value)) {
      try {
        text = value.template cast<Text>();
      } catch (const pybind11::cast_error&) {
      }
    }
    if (!text) {
      throw ArgumentTypeError(std::string(function_) + ": option " + name + "=" +
                              pybind11::repr(value).template cast<std::string>() + " has the wrong type " +
                              std::string(pybind11::str(value.get_type().attr("__name__"))) + " (expected " +
                              PythonTypeName<Text>() + ")");
    }
    field = parse(*text);
  }

  // Throws ArgumentTypeError for a keyword that no Read named, listing the options.
  void Finish() const {
    for (auto [key, value] : kwargs_) {
      const std::string name = pybind11::str(key).cast<std::string>();
      if (names_.count(name)) continue;
      std::string known;
      for (const std::string& n : names_) known += (known.empty() ? "" : ", ") + n;
      throw ArgumentTypeError(std::string(function_) + ": unknown option '" + name + "' (options: " + known + ")");
    }
  }

 private:
  // pybind11 casts True to int and 1 to bool; Python code would not mean either.
  template <typename Text>
  static bool IsBoolMismatch(const pybind11::object& value) {
    const bool is_bool = pybind11::isinstance<pybind11::bool_>(value);
    if constexpr (std::is_same_v<Text, bool> || std::is_same_v<Text, std::optional<bool>>) {
      return !is_bool && !value.is_none();
    } else if constexpr (std::is_integral_v<Text> || std::is_same_v<Text, std::optional<int64_t>>) {
      return is_bool;
    } else {
      return false;
    }
  }

  const char* function_;
  const pybind11::kwargs kwargs_;  // a reference of its own: callers may pass a temporary
  std::set<std::string> names_;
};

}  // namespace imgpipe::python
