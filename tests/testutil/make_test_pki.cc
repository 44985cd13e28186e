// make_test_pki DIR: makes the TLS test certificates (test_pki.h) in DIR,
// for tests written in other languages; prints nothing, exits 1 on error.

#include <iostream>

#include "tests/testutil/test_pki.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_test_pki DIR\n";
    return 2;
  }
  auto pki = binlog::testing_util::MakeTestPki(argv[1]);
  if (!pki.ok()) {
    std::cerr << pki.status() << "\n";
    return 1;
  }
  return 0;
}
