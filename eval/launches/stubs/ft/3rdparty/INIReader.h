// Host-only stand-in for the INI file reader that FasterTransformer keeps outside the paths in the
// corpus (launch evaluation). Only the declarations its headers use; nothing is implemented.
#pragma once
#include <string>
class INIReader {
public:
    explicit INIReader(const std::string& filename);
    int ParseError() const;
    std::string Get(const std::string& section, const std::string& name, const std::string& default_value = "") const;
    long GetInteger(const std::string& section, const std::string& name, long default_value = 0) const;
    double GetReal(const std::string& section, const std::string& name, double default_value = 0) const;
    float GetFloat(const std::string& section, const std::string& name, float default_value = 0) const;
    bool GetBoolean(const std::string& section, const std::string& name, bool default_value = false) const;
};
