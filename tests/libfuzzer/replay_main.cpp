// The main of a libFuzzer target in the normal build: feeds every file named on the command line
// (folders: every file in them, recursively) to LLVMFuzzerTestOneInput, the entry point the
// libFuzzer build fuzzes. ctest runs it over the seed corpus and the committed crash inputs, so
// each crash stays fixed without clang. A crash here ends the test by its signal.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path arg = argv[i];
    if (fs::is_directory(arg)) {
      for (const auto& item : fs::recursive_directory_iterator(arg))
        if (item.is_regular_file()) files.push_back(item.path());
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::cerr << argv[0] << ": " << arg.string() << ": no such file or folder\n";
      return 2;
    }
  }
  if (files.empty()) {
    std::cerr << argv[0] << ": no inputs (pass corpus files or folders)\n";
    return 2;
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string bytes = buffer.str();
    std::cout << "replay " << file.string() << " (" << bytes.size() << " bytes)" << std::endl;
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << files.size() << " inputs replayed, none crashed\n";
  return 0;
}
