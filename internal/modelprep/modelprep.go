// Package modelprep prepares the pipeline's models once, offline: it rewrites each fetched
// PaddleOCR export into the equivalent faster graph (internal/onnxgraph), stamps it as prepared and
// writes it beside the original, with checksums. The embedded runtime and the Triton model
// repository both load these bytes, so what Triton serves is the graph that was benchmarked.
//
// Both ends are pinned: a source model must have the SHA-256 that scripts/fetch_models.sh pins,
// and the prepared model must come out with the SHA-256 pinned here. The rewrite is deterministic,
// so a different result means the rewrite changed; the test that checks the pins says so, and the
// pins (and FormatVersion) are updated in the same change.
package modelprep

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ocrgate/ocrgate/internal/onnxgraph"
)

// FormatVersion names the rewrite that produced a prepared model. It is stamped into the model's
// metadata under MetadataKey; bump it whenever Prepare writes different bytes.
const FormatVersion = "5"

// Metadata keys stamped into every prepared model. ONNX Runtime exposes them as the model's custom
// metadata, which is how the embedded runtime (service/onnxrt) tells a prepared model from an
// original one and learns its output shape.
const (
	MetadataKey       = "ocrgate.prepared"      // FormatVersion
	SourceMetadataKey = "ocrgate.source_sha256" // SHA-256 of the original file
	RewritesKey       = "ocrgate.rewrites"      // what the rewrite changed, for people
	OutputShapeKey    = "ocrgate.output_shape"  // output shape from input shape (Model.OutputShape)
	Int8MetadataKey   = "ocrgate.int8"          // what the int8 variant quantized
)

// ChecksumsFile lists the prepared files' SHA-256 in the model directory (sha256sum -c reads it).
const ChecksumsFile = "prepared.sha256"

const (
	preparedSuffix = ".prepared.onnx" // <name>.onnx → <name>.prepared.onnx
	int8Suffix     = ".int8.onnx"     // <name>.onnx → <name>.int8.onnx
	tmpSuffix      = ".tmp"           // written first, renamed into place
	maxModelBytes  = 256 << 20        // the PP-OCR models are 0.6–11 MB
	sourceHint     = "run scripts/fetch_models.sh, which fetches and verifies it"
)

// Model is one of the pipeline's models: the file fetched and the file prepared from it.
type Model struct {
	Name           string // the pipeline's name for it: det, rec, cls
	Source         string // file name of the fetched original in the model directory
	SourceSHA256   string // as pinned by scripts/fetch_models.sh
	PreparedSHA256 string // what Prepare makes of it, pinned
	// OutputShape is the output's shape as a function of the input's, stamped into the prepared
	// model so the embedded runtime can give ONNX Runtime the output buffer to write into:
	// comma-separated dimensions, each an integer, inK (input dimension K) or inK/D.
	OutputShape string
	// CTCSpace, when set, is the space class of a CTC recognizer: its final softmax over every class
	// is replaced by the seven values per time step the decoder reads (onnxgraph.CTCTop).
	CTCSpace int64
	// Int8 lists the 1×1 convolutions (by input tensor of the prepared graph) to quantize, with
	// their calibrated ranges; when set, an int8 variant is written beside the prepared model.
	Int8       map[string]onnxgraph.ConvRanges
	Int8SHA256 string // what PrepareInt8 makes of the prepared model, pinned
}

// Int8Name is the file name of the model's int8 variant.
func (m Model) Int8Name() string {
	return strings.TrimSuffix(m.Source, ".onnx") + int8Suffix
}

// Prepared is the file name of the prepared model.
func (m Model) Prepared() string { return PreparedName(m.Source) }

// PreparedName maps an original model file name to its prepared one.
func PreparedName(source string) string {
	return strings.TrimSuffix(source, ".onnx") + preparedSuffix
}

// Models are the pipeline's three models as scripts/fetch_models.sh installs them.
var Models = []Model{
	{
		Name:           "det",
		OutputShape:    "in0,1,in2,in3", // probability map at input resolution
		Source:         "ch_PP-OCRv4_det_infer.onnx",
		SourceSHA256:   "30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff",
		PreparedSHA256: "c16cb6e7c0777859cfdb59651364eb217d1254e94ba7a401566d0ff0ecdb7d7a",
	},
	{
		Name:           "rec",
		OutputShape:    "in0,in3/8,7", // one time step per 8 px of width: class, p, p(space), two runners-up
		CTCSpace:       6624,          // blank 0, the 6623 dictionary characters, then the space
		Int8:           RecInt8Ranges,
		Int8SHA256:     "ee276df8cb0a8575f2d01ffde07be232b04b0563b41dcf42644694410026d2e9",
		Source:         "ch_PP-OCRv4_rec_infer.onnx",
		SourceSHA256:   "06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0",
		PreparedSHA256: "c40406788af9e456b7c1999c1d5dbad57a31918d47bcf6a319a45957dc4e5ce4",
	},
	{
		Name:           "cls",
		OutputShape:    "in0,2", // p(0°), p(180°)
		Source:         "ch_ppocr_mobile_v2.0_cls_infer.onnx",
		SourceSHA256:   "491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640",
		PreparedSHA256: "6a64590f4613769c51458e5a8a0eb2dd512479f7e2d987d8abbb7189090e7bf2",
	},
}

// RecInt8Ranges are the recognizer's quantized convolutions: the ten widest 1×1 convolutions
// (128→128, 128→240, 240→240, 240→480 and 480→480 channels, most of its arithmetic), with the
// ranges of their inputs and outputs measured by cmd/ocrgate-calibrate on the ten myocr
// sample images (not the evaluation set). The first six (240→240 and 480→480 after the
// squeeze-excitation) took 11 % off the CPU time and kept sroie-dev accuracy (word F1 (ci) 0.8481
// → 0.8506, char accuracy (ci) 0.9623 → 0.9629); the next four took another 8 % off the
// recognizer (13 % with HardSwish after each DequantizeLinear) for word F1 (ci) 0.8496 → 0.8483
// and char accuracy (ci) 0.9624 → 0.9614. The 64→128 and 64→64 ones made it slower (their
// transposes and (de)quantizations cost more than int8 saves at that size), all twenty-one
// lost 0.010 word F1 in the first measurement, and the depthwise ones run slower in int8.
var RecInt8Ranges = map[string]onnxgraph.ConvRanges{
	"hardswish_42.tmp_0": {Input: onnxgraph.Range{Lo: -0.375, Hi: 3.6262302}, Output: onnxgraph.Range{Lo: -5.7545576, Hi: 4.8756013}},
	"hardswish_44.tmp_0": {Input: onnxgraph.Range{Lo: -0.375, Hi: 10.2494955}, Output: onnxgraph.Range{Lo: -4.966622, Hi: 5.5629597}},
	"hardswish_46.tmp_0": {Input: onnxgraph.Range{Lo: -0.375, Hi: 9.822979}, Output: onnxgraph.Range{Lo: -5.9328732, Hi: 5.0869107}},
	"hardswish_48.tmp_0": {Input: onnxgraph.Range{Lo: -0.375, Hi: 9.551503}, Output: onnxgraph.Range{Lo: -5.8884506, Hi: 5.9329314}},
	"p2o.Mul.141":        {Input: onnxgraph.Range{Lo: -0.9751131, Hi: 4.0167303}, Output: onnxgraph.Range{Lo: -6.7589684, Hi: 9.9849415}},
	"hardswish_54.tmp_0": {Input: onnxgraph.Range{Lo: -0.375, Hi: 10.410863}, Output: onnxgraph.Range{Lo: -5.965027, Hi: 8.686094}},
	"hardswish_38.tmp_0": {Input: onnxgraph.Range{Lo: -0.375, Hi: 12.97394}, Output: onnxgraph.Range{Lo: -7.4724274, Hi: 6.9026594}},
	"hardswish_40.tmp_0": {Input: onnxgraph.Range{Lo: -0.375, Hi: 10.269126}, Output: onnxgraph.Range{Lo: -5.0075526, Hi: 4.851058}},
	"p2o.Mul.127":        {Input: onnxgraph.Range{Lo: -0.7163182, Hi: 2.4847565}, Output: onnxgraph.Range{Lo: -10.234143, Hi: 5.653692}},
	"hardswish_56.tmp_0": {Input: onnxgraph.Range{Lo: -0.375, Hi: 19.200796}, Output: onnxgraph.Range{Lo: -23.190187, Hi: 34.320854}},
}

// Prepare rewrites one original model and stamps it. It is deterministic: the same source bytes
// always give the same prepared bytes.
func (m Model) Prepare(source []byte) ([]byte, onnxgraph.Rewrites, error) {
	out, rw, err := onnxgraph.Optimize(source)
	if err != nil {
		return nil, rw, err
	}
	if m.CTCSpace > 0 {
		if out, err = onnxgraph.CTCTop(out, m.CTCSpace); err != nil {
			return nil, rw, err
		}
	}
	out, err = onnxgraph.SetMetadata(out,
		onnxgraph.MetadataEntry{Key: MetadataKey, Value: FormatVersion},
		onnxgraph.MetadataEntry{Key: SourceMetadataKey, Value: SHA256(source)},
		onnxgraph.MetadataEntry{Key: RewritesKey, Value: describe(rw)},
		onnxgraph.MetadataEntry{Key: OutputShapeKey, Value: m.OutputShape},
	)
	return out, rw, err
}

// PrepareInt8 quantizes a prepared model's convolutions listed in m.Int8 (see
// onnxgraph.QuantizeConvs) and stamps what it did. It is deterministic.
func (m Model) PrepareInt8(prepared []byte) ([]byte, error) {
	out, n, err := onnxgraph.QuantizeConvs(prepared, m.Int8)
	if err != nil {
		return nil, err
	}
	return onnxgraph.SetMetadata(out, onnxgraph.MetadataEntry{Key: Int8MetadataKey, Value: fmt.Sprintf("%d 1x1 convolutions u8s8, per-channel weights, static ranges", n)})
}

func describe(rw onnxgraph.Rewrites) string {
	return fmt.Sprintf("hard-swish %d, scale-and-bias into conv %d, into next 1x1 conv %d, as BatchNormalization %d, constants commuted %d, scalars %d, channel biases %d",
		rw.HardSwish, rw.IntoConv, rw.IntoNext, rw.BatchNorm, rw.Commuted, rw.Scalars, rw.Biases)
}

// SHA256 is the hex SHA-256 of data.
func SHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Result says what Dir did with one model.
type Result struct {
	Model    Model
	Path     string // the prepared file
	Written  bool   // false: it was already there and verified
	Int8     bool   // the int8 variant, not the prepared model
	Rewrites onnxgraph.Rewrites
}

// ErrSource means a source model is missing or is not the pinned file.
var ErrSource = errors.New("source model missing or not the pinned file")

// Dir prepares every model of models found in dir, writing <name>.prepared.onnx beside each
// source and the checksums file. A prepared file already present with its pinned checksum is kept
// as it is (so running it again only verifies). A pin left empty is not checked (for development:
// the test that checks the pins reports the new value).
func Dir(dir string, models []Model) ([]Result, error) {
	var results []Result
	for _, m := range models {
		r, err := prepareOne(dir, m)
		if err != nil {
			return results, fmt.Errorf("%s (%s): %w", m.Name, m.Source, err)
		}
		results = append(results, r)
		if len(m.Int8) > 0 {
			r, err := prepareInt8(dir, m, r.Path)
			if err != nil {
				return results, fmt.Errorf("%s int8: %w", m.Name, err)
			}
			results = append(results, r)
		}
	}
	if err := writeChecksums(dir, results); err != nil {
		return results, err
	}
	return results, nil
}

func prepareOne(dir string, m Model) (Result, error) {
	res := Result{Model: m, Path: filepath.Join(dir, m.Prepared())}
	if m.PreparedSHA256 != "" {
		if have, err := readBounded(res.Path); err == nil && SHA256(have) == m.PreparedSHA256 {
			return res, nil
		}
	}
	src, err := readBounded(filepath.Join(dir, m.Source))
	if errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("%w: %s is missing (%s)", ErrSource, m.Source, sourceHint)
	}
	if err != nil {
		return res, err
	}
	if got := SHA256(src); got != m.SourceSHA256 {
		return res, fmt.Errorf("%w: %s has SHA-256 %s, want %s (%s)", ErrSource, m.Source, got, m.SourceSHA256, sourceHint)
	}
	out, rw, err := m.Prepare(src)
	if err != nil {
		return res, err
	}
	res.Rewrites = rw
	if got := SHA256(out); m.PreparedSHA256 != "" && got != m.PreparedSHA256 {
		return res, fmt.Errorf("prepared model has SHA-256 %s, pinned %s: the rewrite changed without its pin (update internal/modelprep)", got, m.PreparedSHA256)
	}
	if err := writeAtomic(res.Path, out); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}

// prepareInt8 writes the int8 variant from the prepared model at prepared.
func prepareInt8(dir string, m Model, prepared string) (Result, error) {
	res := Result{Model: m, Path: filepath.Join(dir, m.Int8Name()), Int8: true}
	if m.Int8SHA256 != "" {
		if have, err := readBounded(res.Path); err == nil && SHA256(have) == m.Int8SHA256 {
			return res, nil
		}
	}
	src, err := readBounded(prepared)
	if err != nil {
		return res, err
	}
	out, err := m.PrepareInt8(src)
	if err != nil {
		return res, err
	}
	if got := SHA256(out); m.Int8SHA256 != "" && got != m.Int8SHA256 {
		return res, fmt.Errorf("int8 model has SHA-256 %s, pinned %s: the rewrite or the ranges changed without the pin (update internal/modelprep)", got, m.Int8SHA256)
	}
	if err := writeAtomic(res.Path, out); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}

// readBounded reads a model file, refusing absurd sizes.
func readBounded(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxModelBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than any model of the pipeline", path, st.Size())
	}
	return os.ReadFile(path)
}

// writeAtomic writes data to a temporary file beside path and renames it into place, so a reader
// never sees half a model.
func writeAtomic(path string, data []byte) error {
	tmp := path + tmpSuffix
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp) // err is what the caller acts on; the next run rewrites a file left behind
		return err
	}
	return nil
}

func writeChecksums(dir string, results []Result) error {
	var b strings.Builder
	for _, r := range results {
		data, err := readBounded(r.Path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", SHA256(data), filepath.Base(r.Path))
	}
	return writeAtomic(filepath.Join(dir, ChecksumsFile), []byte(b.String()))
}

// Pack is a language pack: a recognizer for one language besides the default Chinese one, with its
// dictionary. Detection, orientation and layout are shared, so a pack is one model and one file.
type Pack struct {
	Lang       string // the request's lang: ja, ko, zh-Hant, en
	Model      Model  // Name is "rec_" + Lang
	Dictionary string // file name in the model directory
	DictSHA256 string // as pinned by scripts/fetch_models.sh
}

// Packs are the language packs scripts/fetch_models.sh fetches when OCRGATE_LANGS names them. Each
// recognizer answers one time step per 8 px of width, as the default one does, over its
// dictionary's classes with blank first and the space last (the dictionary's lines + 2). They are
// rewritten like the default recognizer but keep their softmax over every class: CTCTop writes
// opset-9 operators (TopK and Slice with attributes) and these exports are of opset 10 and up.
// None has an int8 variant: the default recognizer's quantized convolutions were chosen and
// calibrated for its own graph, and these have not been calibrated or measured yet.
var Packs = []Pack{
	{
		Lang: "ja", Dictionary: "dict_japan.txt", DictSHA256: "1dcfcb41eec90576a945b3084f22ade11ced506e24f14879245b071698f308e8",
		Model: Model{
			Name: "rec_ja", OutputShape: "in0,in3/8,4401",
			Source:         "rec_japan_PP-OCRv3_infer.onnx",
			PreparedSHA256: "03a31b5ca696be9860a731c6bcae4c4e8281e88eb6837664b4755891e6bcf3fc",
			SourceSHA256:   "d234a7591c39d4f5172c918199c81f7cc6a648759b134014940d2aca9b6c8152",
		},
	},
	{
		Lang: "ko", Dictionary: "dict_korean.txt", DictSHA256: "aa1fdc8ae8f7cd40a0ec4edb472eb0421e11427e6ccfee9915440742c18b0a20",
		Model: Model{
			Name: "rec_ko", OutputShape: "in0,in3/8,3690",
			Source:         "rec_korean_PP-OCRv3_infer.onnx",
			PreparedSHA256: "bd30538edd9072116ba06ddb646bfc1c319877f4f2e37deac29cb10d02130c5e",
			SourceSHA256:   "c7b809fc88ef30b6b5a4bc4daa4703f5809c2bcba8a7ea393d48290a4cf53220",
		},
	},
	{
		Lang: "zh-Hant", Dictionary: "dict_chinese_cht.txt", DictSHA256: "832551fee1f2fbc97508772d81ebdc8dba12c00de97a35c71c9ddf43ddac1a83",
		Model: Model{
			Name: "rec_zh-Hant", OutputShape: "in0,in3/8,8423",
			Source:         "rec_chinese_cht_PP-OCRv3_infer.onnx",
			PreparedSHA256: "947dcadac57a66cc51ab16e0f47a45206e0c62e20cb0dfcf6889c8406adb4008",
			SourceSHA256:   "19b4665a8617e1413788ef2701883716e9b910986598cc41f1250a53a629cac8",
		},
	},
	{
		Lang: "en", Dictionary: "dict_en.txt", DictSHA256: "5662df9d2d03f0e8ca0d3b0649d6acbab904b6a14b3d3521463c71c37c668ce3",
		Model: Model{
			Name: "rec_en", OutputShape: "in0,in3/8,97",
			Source:         "en_PP-OCRv4_rec.onnx",
			PreparedSHA256: "ccf03be2d36f5c6680a17fa1da6f1e03bb0f3ac534a1cfb6a9e6541d5992020e",
			SourceSHA256:   "870d81b658bb0ba59ae4a2aecf21f879e4921002be29d208cdcdb977af6e0959",
		},
	},
}

// PackFor returns the language pack of lang.
func PackFor(lang string) (Pack, bool) {
	for _, p := range Packs {
		if p.Lang == lang {
			return p, true
		}
	}
	return Pack{}, false
}
