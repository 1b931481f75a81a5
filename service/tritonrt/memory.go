package tritonrt

import "github.com/ocrgate/ocrgate/service/ocr"

// Memory is what a Triton call holds in this process: the response message the outputs are
// copied from (outputs through shared memory need less). Triton may serve the exported
// recognizer, whose output is every class's probability, so both recognizer figures are that
// output's size.
var Memory = ocr.RuntimeMemory{DetPerPixel: 4, RecPerPixel: fullRecOutPerPixel, RecOutPerPixel: fullRecOutPerPixel}

// fullRecOutPerPixel is the exported recognizer's output per input pixel: 6 625 float32 class
// probabilities per timestep, one timestep per 8 columns of a 48-pixel-high input.
const fullRecOutPerPixel = 6625 * 4 / (8 * 48)

// MemoryFigures says what the runtime allocates in this process per inference, for the
// pipeline's cost model (ocr.MemoryReporter): Memory.
func (r *Runtime) MemoryFigures() ocr.RuntimeMemory { return Memory }
