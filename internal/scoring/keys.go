package scoring

// KeyFields are the SROIE task-3 key fields, in the scorer's order.
var KeyFields = [4]string{"company", "date", "address", "total"}

// FieldCounts are the counts of one key field (or of all four together).
type FieldCounts struct {
	GT      int `json:"gt"`      // images whose ground truth has a non-empty value
	Pred    int `json:"pred"`    // non-empty predictions
	Correct int `json:"correct"` // non-empty ground truth equal to the prediction
}

func (c *FieldCounts) add(o FieldCounts) {
	c.GT += o.GT
	c.Pred += o.Pred
	c.Correct += o.Correct
}

// KeyCounts are the key-field counts of one image (score_keys_image in Python) or the sums over
// many (see Add).
type KeyCounts struct {
	Fields [4]FieldCounts // per field, in KeyFields order; values compared case-folded
	All    FieldCounts    // the four fields summed
	// AllCaseSensitive is All with values compared without case folding (for
	// task3_f1_case_sensitive).
	AllCaseSensitive FieldCounts
	Images           int // images scored
	ImagesAllCorrect int // images with every non-empty ground-truth field right (case-folded)
}

// Add adds o to k field by field.
func (k *KeyCounts) Add(o KeyCounts) {
	for i := range k.Fields {
		k.Fields[i].add(o.Fields[i])
	}
	k.All.add(o.All)
	k.AllCaseSensitive.add(o.AllCaseSensitive)
	k.Images += o.Images
	k.ImagesAllCorrect += o.ImagesAllCorrect
}

// ScoreKeys scores the predicted key fields of one image against its ground truth. Only the
// KeyFields entries are looked at; a missing entry is an empty value. Values are compared after
// whitespace normalisation (strip, collapse runs) and Python case folding (norm_key in Python).
func ScoreKeys(gt, pred map[string]string) KeyCounts {
	k := KeyCounts{Images: 1}
	for i, f := range KeyFields {
		g, p := squash(validText(gt[f])), squash(validText(pred[f]))
		strict := fieldCounts(g, p)
		folded := fieldCounts(casefold(g), casefold(p))
		k.Fields[i] = folded
		k.All.add(folded)
		k.AllCaseSensitive.add(strict)
	}
	if k.All.Correct == k.All.GT {
		k.ImagesAllCorrect = 1
	}
	return k
}

func fieldCounts(g, p string) FieldCounts {
	var c FieldCounts
	if g != "" {
		c.GT = 1
		if p == g {
			c.Correct = 1
		}
	}
	if p != "" {
		c.Pred = 1
	}
	return c
}

// FieldSummary are the metrics of one key field, or of all four ("all").
type FieldSummary struct {
	FieldCounts
	Accuracy  float64 `json:"accuracy"` // Correct/GT; 0 when GT is 0
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// KeySummary holds the metrics of the Python scorer's keys summary, under the same JSON names.
type KeySummary struct {
	// Fields has an entry for each of KeyFields and "all", the four summed.
	Fields                 map[string]FieldSummary `json:"fields"`
	OverallAccuracy        float64                 `json:"overall_accuracy"`
	Task3Precision         float64                 `json:"task3_precision"`
	Task3Recall            float64                 `json:"task3_recall"`
	Task3F1                float64                 `json:"task3_f1"`
	Task3F1CaseSensitive   float64                 `json:"task3_f1_case_sensitive"`
	ImagesAllFieldsCorrect float64                 `json:"images_all_fields_correct"`
}

// Summary computes the key-field metrics from k.
func (k KeyCounts) Summary() KeySummary {
	s := KeySummary{Fields: make(map[string]FieldSummary, len(KeyFields)+1)}
	for i, f := range KeyFields {
		s.Fields[f] = fieldSummary(k.Fields[i])
	}
	all := fieldSummary(k.All)
	s.Fields["all"] = all
	s.OverallAccuracy = all.Accuracy
	s.Task3Precision, s.Task3Recall, s.Task3F1 = all.Precision, all.Recall, all.F1
	_, _, s.Task3F1CaseSensitive = prf(k.AllCaseSensitive.Correct, k.AllCaseSensitive.Pred, k.AllCaseSensitive.GT)
	s.ImagesAllFieldsCorrect = ratio(k.ImagesAllCorrect, k.Images, 0.0)
	return s
}

func fieldSummary(c FieldCounts) FieldSummary {
	p, r, f := prf(c.Correct, c.Pred, c.GT)
	return FieldSummary{FieldCounts: c, Accuracy: ratio(c.Correct, c.GT, 0.0), Precision: p, Recall: r, F1: f}
}
