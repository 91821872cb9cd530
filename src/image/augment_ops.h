// The operations of torchvision's automatic augmentation policies (its autoaugment.py
// `_apply_op`: AutoAugment, RandAugment, TrivialAugmentWide) on HWC uint8 images, with
// the arithmetic of torchvision's PIL path (Pillow 9's ImageEnhance, ImageOps,
// ImageFilter.SMOOTH, Image.rotate and Image.transform(AFFINE, NEAREST)): the same bytes.
// Images have 1 (Pillow's "L") or 3 ("RGB") channels. Every function throws
// InvalidArgument for another channel count, an output that is the input, posterize bits
// outside [0, 8], a magnitude or matrix that is not finite, or an unknown op name.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "image/image.h"

namespace imgpipe {

// torchvision's op names, in the order of TrivialAugmentWide's augmentation space, then
// Invert (AutoAugment's policies only).
enum class AugmentOp {
  kIdentity,
  kShearX,
  kShearY,
  kTranslateX,
  kTranslateY,
  kRotate,
  kBrightness,
  kColor,
  kContrast,
  kSharpness,
  kPosterize,
  kSolarize,
  kAutoContrast,
  kEqualize,
  kInvert,
};
inline constexpr int kAugmentOpCount = 15;

// The op's torchvision name ("ShearX", "Brightness", ...).
const char* AugmentOpName(AugmentOp op);
// The op of a torchvision name; throws InvalidArgument naming `name` and the names allowed.
AugmentOp ParseAugmentOp(const std::string& name);
// True for the ops that move pixels (ShearX/Y, TranslateX/Y, Rotate). The others act
// on each pixel, on a symmetric 3x3 neighbourhood (Sharpness) or on the histogram, so
// they commute with a horizontal flip.
bool IsGeometricAugmentOp(AugmentOp op);

// The colour of pixels a geometric op maps from outside the image, per channel (a 1-channel
// image uses the first). torchvision's policies default to fill=None, which its PIL path
// turns into 0.
using AugmentFill = std::array<uint8_t, 3>;

// What torchvision's `_apply_op(img, op, magnitude, NEAREST, fill)` does to a PIL image:
// ShearX/Y: affine with shear degrees(atan(magnitude)) about (0, 0); TranslateX/Y: by
// int(magnitude) pixels; Rotate: by magnitude degrees counter-clockwise about the centre;
// Brightness, Color, Contrast, Sharpness: factor 1 + magnitude; Posterize: int(magnitude)
// bits; Solarize: threshold magnitude; the others ignore it. `magnitude` is a double, as
// torchvision's is (the policies' float32 grid values widened). In place (the geometric
// ops and Sharpness go through a scratch image kept by the thread).
void ApplyAugmentOp(Image* image, AugmentOp op, double magnitude, const AugmentFill& fill = {});

// torchvision's `_get_inverse_affine_matrix(center, angle, translate, scale, shear)`: the
// output-to-input matrix (a, b, c, d, e, f), x_in = a x + b y + c, y_in = d x + e y + f,
// with the same double arithmetic. Angles in degrees.
struct AffineParams {
  double center_x = 0, center_y = 0;
  double angle = 0;
  double translate_x = 0, translate_y = 0;
  double scale = 1;
  double shear_x = 0, shear_y = 0;
};
std::array<double, 6> InverseAffineMatrix(const AffineParams& params);

// Pillow's Image.transform(size, AFFINE, matrix, NEAREST, fillcolor=fill) into `out` (made
// the size of `src`, which it must not be): each output pixel takes the input pixel its
// centre maps into (Pillow's 16.16 fixed point, or its doubles past 32768 pixels), or the
// fill outside the input.
void TransformAffineNearest(const Image& src, const std::array<double, 6>& matrix,
                            const AugmentFill& fill, Image* out);

// Pillow's Image.rotate(degrees, NEAREST, expand=False, fillcolor=fill) into `out` (not
// `src`): counter-clockwise about the image centre; multiples of 180 degrees, and of 90 on
// a square image, are exact transposes as in Pillow.
void RotateNearest(const Image& src, double degrees, const AugmentFill& fill, Image* out);

// ImageEnhance.Brightness(image).enhance(factor): Image.blend of black and the image,
// in Pillow's float32 arithmetic (truncated, clamped to [0, 255]).
void EnhanceBrightness(Image* image, double factor);
// ImageEnhance.Color (torchvision's adjust_saturation): the blend of the image's "L"
// grey ((19595 R + 38470 G + 7471 B + 32768) >> 16) and the image. A 1-channel image
// stays as it is.
void EnhanceColor(Image* image, double factor);
// ImageEnhance.Contrast: the blend of the grey image's mean, rounded, and the image.
void EnhanceContrast(Image* image, double factor);
// ImageEnhance.Sharpness into `out` (not `src`): the blend of ImageFilter.SMOOTH (3x3,
// weights 1 and a centre 5, over 13; the border pixels unchanged) and the image.
void EnhanceSharpness(const Image& src, double factor, Image* out);

// ImageOps.posterize: keeps the top `bits` (0..8) bits of every sample.
void Posterize(Image* image, int bits);
// ImageOps.solarize: samples >= threshold become 255 - sample.
void Solarize(Image* image, double threshold);
// ImageOps.autocontrast(cutoff=0): each channel stretched from its [lowest, highest]
// sample to [0, 255]; a channel of one value stays as it is.
void AutoContrast(Image* image);
// ImageOps.equalize: each channel through Pillow's histogram-equalising table.
void Equalize(Image* image);
// ImageOps.invert: 255 - sample.
void Invert(Image* image);

}  // namespace imgpipe
