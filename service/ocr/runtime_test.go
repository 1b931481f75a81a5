package ocr

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestNotReadyReasons(t *testing.T) {
	detail := errors.New("dial tcp 10.0.0.1:8001: connection refused")
	nr := func(r string) error { return &NotReadyError{Reason: r, Err: detail} }
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"nil", nil, nil},
		{"none", detail, nil},
		{"one", nr("triton_unreachable"), []string{"triton_unreachable"}},
		{"wrapped", fmt.Errorf("check: %w", nr("model_not_ready: ppocr_rec")), []string{"model_not_ready: ppocr_rec"}},
		{"joined, in order, once", errors.Join(nr("b"), fmt.Errorf("x: %w", errors.Join(nr("a"), nr("b"))), detail), []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NotReadyReasons(tt.err); !slices.Equal(got, tt.want) {
				t.Errorf("NotReadyReasons = %q, want %q", got, tt.want)
			}
		})
	}
	err := nr("triton_unreachable")
	if !errors.Is(err, detail) || err.Error() != "triton_unreachable: "+detail.Error() {
		t.Errorf("NotReadyError %q does not wrap its detail", err)
	}
}
