// Package openapi holds ocrgate's OpenAPI 3.1 document, the one description of the HTTP API:
// every route, request field, response shape, header and error code. It is served at
// GET /openapi.json, and the service's HTTP tests validate every request they send and every
// response they get against it, with additionalProperties: false on response objects, so a field,
// header, status or error code the document does not describe fails the tests.
//
// To extend the API, edit openapi.json in the same change: add the field to its schema under
// components.schemas, the header under the response, the error code to the enum of its status
// (components.schemas.ErrorCode4xx/5xx).
package openapi

import _ "embed"

// Document is openapi.json as committed.
//
//go:embed openapi.json
var Document []byte
