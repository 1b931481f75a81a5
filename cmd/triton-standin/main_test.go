package main

import (
	"io"
	"testing"
)

// TestParseFlags checks that the stand-in takes tritonserver's command line as the chart and
// compose.yaml write it, and refuses what it would silently ignore.
func TestParseFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    options
		wantErr bool
	}{
		{
			name: "the chart's arguments",
			args: []string{"--model-repository=/models", "--exit-on-error=true", "--strict-readiness=true",
				"--allow-client-shm=true", "--http-port=8010", "--grpc-port=8001", "--metrics-port=8002"},
			want: options{repository: "/models", httpPort: 8010, grpcPort: 8001, metricsPort: 8002,
				exitOnError: true, strictReadiness: true, allowClientSHM: true, ortLib: defaultORTLib},
		},
		{
			name: "defaults are Triton's, library from the environment",
			args: []string{"--model-repository", "/m"},
			env:  map[string]string{"TRITON_STANDIN_ORT_LIB": "/lib/ort.so"},
			want: options{repository: "/m", httpPort: 8000, grpcPort: 8001, metricsPort: 8002,
				exitOnError: true, strictReadiness: true, ortLib: "/lib/ort.so"},
		},
		{name: "no repository", args: []string{"--grpc-port=8001"}, wantErr: true},
		{name: "unknown flag", args: []string{"--model-repository=/m", "--backend-config=x"}, wantErr: true},
		{name: "stray argument", args: []string{"--model-repository=/m", "serve"}, wantErr: true},
		{name: "port out of range", args: []string{"--model-repository=/m", "--http-port=70000"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, env(tt.env), io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}
