package org.privface.agent.track;

/**
 * An axis-aligned detection box in pixels, independent of OpenCV so tracking is testable without natives.
 * Arithmetic is done in long so boxes near {@code Integer.MAX_VALUE} cannot overflow.
 */
public record Box(int x, int y, int width, int height) {

    public Box {
        if (width < 0 || height < 0) {
            throw new IllegalArgumentException("box width and height must be >= 0, was " + width + "x" + height);
        }
    }

    public long area() {
        return (long) width * height;
    }

    /** Intersection over union in [0, 1]; 0 when either box is empty. */
    public double iou(Box other) {
        long ix = Math.min((long) x + width, (long) other.x + other.width) - Math.max(x, other.x);
        long iy = Math.min((long) y + height, (long) other.y + other.height) - Math.max(y, other.y);
        if (ix <= 0 || iy <= 0) {
            return 0;
        }
        long intersection = ix * iy;
        long union = area() + other.area() - intersection;
        return union <= 0 ? 0 : (double) intersection / union;
    }

    public double centreX() {
        return x + width / 2.0;
    }

    public double centreY() {
        return y + height / 2.0;
    }

    /** Mean side length: the scale against which centre distances are judged. */
    public double size() {
        return (width + (double) height) / 2.0;
    }

    public double centreDistance(Box other) {
        return Math.hypot(centreX() - other.centreX(), centreY() - other.centreY());
    }
}
