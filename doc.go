// Package pds is the Product Data Service: a read-optimised service that
// answers what is known about a product identifier from an immutable
// snapshot. The code lives in the subpackages; see README.md.
package pds
