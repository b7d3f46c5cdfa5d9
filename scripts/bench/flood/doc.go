// Command flood is make load's connection flood: from one loopback address
// it opens keep-alive connections (each sends one request with a key and
// reads its answer) or silent ones (they send nothing) against a server, and
// holds them, opening a new one for each the server closes or refuses; while
// it does, it sends requests as a new client from another address, one
// connection each. It prints one line: RESULT followed by what the flood and
// the new client saw (internal/flood).
package main
