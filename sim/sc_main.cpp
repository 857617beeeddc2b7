// libsystemc leaves sc_main unresolved, and mimic never calls it: the simulation thread starts
// the simulation (simulator.cpp). Every executable and shared library that links the model
// compiles this in, so that each of them, and Python loading them, resolves the symbol.
extern "C" int sc_main(int, char**) {
  return 0;
}
