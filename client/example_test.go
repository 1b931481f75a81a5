package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/ocrgate/ocrgate/client"
)

// Read the text of a receipt. serverURL is the address of a running ocrgate, such as
// "http://localhost:5000"; apiKey is needed only when the service is configured with keys.
func ExampleClient_OCR() {
	c, err := client.New(serverURL, client.WithAPIKey(apiKey))
	if err != nil {
		log.Fatal(err)
	}
	img, err := os.ReadFile(receipt)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.OCR(ctx, img)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.ImageInfo.Format, res.ImageInfo.Width, res.ImageInfo.Height)
	for _, r := range res.Regions {
		if strings.HasPrefix(r.Text, "Total") {
			fmt.Println(r.Text, "at", r.BoundingShape.Points[0].X, r.BoundingShape.Points[0].Y)
			break
		}
	}
	// Output:
	// jpeg 470 940
	// Total Qty: 12 at 53 541
}

// Send an image from any reader, here a file.
func ExampleClient_OCRReader() {
	c, err := client.New(serverURL, client.WithAPIKey(apiKey))
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open(receipt)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	res, err := c.OCRReader(context.Background(), f, client.RequestID("receipt-photo"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.RequestID, strings.Contains(res.Text, "JOHOR BAHRU"))
	// Output:
	// receipt-photo true
}

// Have the service's chat model fill the built-in receipt template, then decode the object.
func ExampleClient_Extract() {
	c, err := client.New(serverURL, client.WithAPIKey(apiKey))
	if err != nil {
		log.Fatal(err)
	}
	img, err := os.ReadFile(receipt)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := c.Extract(context.Background(), img, client.Template("receipt"))
	if err != nil {
		log.Fatal(err)
	}
	var fields struct {
		Date  *string `json:"date"`
		Total *string `json:"total"`
	}
	if err := ex.Decode(&fields); err != nil {
		log.Fatal(err)
	}
	fmt.Println(*fields.Date, *fields.Total, ex.ChatAttempts)
	// Output:
	// 25/12/2018 77.55 1
}

// Fill your own JSON Schema instead of a template.
func ExampleSchema() {
	c, err := client.New(serverURL, client.WithAPIKey(apiKey))
	if err != nil {
		log.Fatal(err)
	}
	img, err := os.ReadFile(receipt)
	if err != nil {
		log.Fatal(err)
	}
	schema := []byte(`{"type": "object", "properties": {"total": {"type": ["string", "null"]}}, "required": ["total"]}`)
	ex, err := c.Extract(context.Background(), img, client.Schema(schema))
	if err != nil {
		log.Fatal(err)
	}
	var fields struct{ Total string }
	if err := ex.Decode(&fields); err != nil {
		log.Fatal(err)
	}
	fmt.Println(fields.Total)
	// Output:
	// 77.55
}

// Errors the service answers carry its status and stable code.
func ExampleError() {
	c, err := client.New(serverURL, client.WithAPIKey(apiKey))
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.OCR(context.Background(), []byte("plain text, not a picture"))
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code)
	}

	// Without the key, the service refuses the call.
	anonymous, _ := client.New(serverURL)
	_, err = anonymous.OCR(context.Background(), []byte("plain text, not a picture"))
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code)
	}
	// Output:
	// 415 unsupported_image_format
	// 401 unauthorized
}
