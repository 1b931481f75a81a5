package server

// Version is ocrgate's version: the one place it is written. The binary prints it (`ocrgate
// version`), responses carry it, and the image build script and Helm chart read it from here.
const Version = "0.1.0"
