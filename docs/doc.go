// Package docs holds ocrgate's documentation: README.md at the top of the repository is the
// front door, and the pages in this directory are the reference by topic. It has no code; its
// tests check that the pages stay true to the tree (links resolve, every error code and metric
// is described).
package docs
