// Package domain holds the types every other package of pds speaks: claims,
// sources, documents, evidence, verdicts, products and their served views, the
// envelope's statuses and reasons, and the one error type with its codes.
//
// It imports only the standard library. Adapters (kv, index) translate storage
// errors into *Error; transports (http, mcp) turn *Error into wire form.
package domain
