// GPU-vs-CPU check: skin every vertex (skinning.glsl is prepended) and write the result as one RGBA32F pixel
// at (id % width, id / width). `what` 0: position; 1: normal. Alpha carries the vertex id.

in vec3 position;
in vec3 normal;
in uvec4 joints;
in uvec4 weights;

uniform int width;
uniform int height;
uniform int what;

out vec4 v_value;

void main() {
    vec3 sp;
    vec3 sn;
    skin(position, normal, joints, weights, sp, sn);
    int x = gl_VertexID % width;
    int y = gl_VertexID / width;
    v_value = vec4(what == 0 ? sp : sn, float(gl_VertexID));
    gl_Position = vec4((float(x) + 0.5) / float(width) * 2.0 - 1.0, (float(y) + 0.5) / float(height) * 2.0 - 1.0, 0.0, 1.0);
    gl_PointSize = 1.0;
}
