//! A small skinned FBX file written in code (ASCII FBX 7.4), for the tests that need one without the shared
//! data and as the fuzzer's seed: a triangle in centimetres, Y up, bound to two bones (`root` at the origin,
//! `arm` 1 m along x), one animation stack `wave` of one second that turns `arm` a quarter turn about z and
//! moves it 0.5 m further along x (a joint move, as IK feet make), and one blend shape `lift` that moves the
//! third corner 0.5 m along z.

/// One second in FBX time units.
const SECOND: u64 = 46_186_158_000;

/// The file's text.
pub fn small_rig() -> String {
    let identity = "1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1";
    // Keyed over the second: `arm`'s z rotation from 0 to 90 degrees, its x translation from 100 to 150 cm.
    let rotate = curve(602, "R", 603, 0.0, [0.0, 90.0]);
    let translate = curve(604, "T", 605, 100.0, [100.0, 150.0]);
    format!(
        r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {{
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}}
GlobalSettings:  {{
	Version: 1000
	Properties70:  {{
		P: "UpAxis", "int", "Integer", "",1
		P: "UpAxisSign", "int", "Integer", "",1
		P: "FrontAxis", "int", "Integer", "",2
		P: "FrontAxisSign", "int", "Integer", "",1
		P: "CoordAxis", "int", "Integer", "",0
		P: "CoordAxisSign", "int", "Integer", "",1
		P: "UnitScaleFactor", "double", "Number", "",1
		P: "TimeMode", "enum", "", "",6
	}}
}}
Objects:  {{
	Geometry: 100, "Geometry::Tri", "Mesh" {{
		Vertices: *9 {{
			a: 0,0,0,100,0,0,0,100,0
		}}
		PolygonVertexIndex: *3 {{
			a: 0,1,-3
		}}
	}}
	Geometry: 700, "Geometry::lift", "Shape" {{
		Version: 100
		Indexes: *1 {{
			a: 2
		}}
		Vertices: *3 {{
			a: 0,0,50
		}}
		Normals: *3 {{
			a: 0,0,0
		}}
	}}
	Deformer: 701, "Deformer::Blend", "BlendShape" {{
		Version: 100
	}}
	Deformer: 702, "SubDeformer::lift", "BlendShapeChannel" {{
		Version: 100
		DeformPercent: 0
		FullWeights: *1 {{
			a: 100
		}}
	}}
	Model: 200, "Model::Tri", "Mesh" {{
		Version: 232
	}}
	Model: 300, "Model::root", "LimbNode" {{
		Version: 232
	}}
	Model: 301, "Model::arm", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",100,0,0
		}}
	}}
	NodeAttribute: 400, "NodeAttribute::root", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	NodeAttribute: 401, "NodeAttribute::arm", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	Deformer: 500, "Deformer::Skin", "Skin" {{
		Version: 101
	}}
	Deformer: 501, "SubDeformer::root", "Cluster" {{
		Version: 100
		Indexes: *2 {{
			a: 0,2
		}}
		Weights: *2 {{
			a: 1,0.5
		}}
		Transform: *16 {{
			a: {identity}
		}}
		TransformLink: *16 {{
			a: {identity}
		}}
	}}
	Deformer: 502, "SubDeformer::arm", "Cluster" {{
		Version: 100
		Indexes: *2 {{
			a: 1,2
		}}
		Weights: *2 {{
			a: 1,0.5
		}}
		Transform: *16 {{
			a: 1,0,0,0,0,1,0,0,0,0,1,0,-100,0,0,1
		}}
		TransformLink: *16 {{
			a: 1,0,0,0,0,1,0,0,0,0,1,0,100,0,0,1
		}}
	}}
	AnimationStack: 600, "AnimStack::wave", "" {{
		Properties70:  {{
			P: "LocalStart", "KTime", "Time", "",0
			P: "LocalStop", "KTime", "Time", "",{SECOND}
		}}
	}}
	AnimationLayer: 601, "AnimLayer::BaseLayer", "" {{
	}}
{rotate}{translate}}}
Connections:  {{
	C: "OO",200,0
	C: "OO",100,200
	C: "OO",300,0
	C: "OO",301,300
	C: "OO",400,300
	C: "OO",401,301
	C: "OO",500,100
	C: "OO",501,500
	C: "OO",502,500
	C: "OO",300,501
	C: "OO",301,502
	C: "OO",701,100
	C: "OO",702,701
	C: "OO",700,702
	C: "OO",601,600
	C: "OO",602,601
	C: "OP",602,301, "Lcl Rotation"
	C: "OP",603,602, "d|Z"
	C: "OO",604,601
	C: "OP",604,301, "Lcl Translation"
	C: "OP",605,604, "d|X"
}}
"#
    )
}

/// An animation curve node `node` of property `what` (`R`, `T`) whose x, y, z rest at (`rest`, 0, 0), and the
/// curve `id` keying one of its axes linearly from `keys[0]` at 0 s to `keys[1]` at 1 s.
fn curve(node: u32, what: &str, id: u32, rest: f32, keys: [f32; 2]) -> String {
    let (a, b) = (keys[0], keys[1]);
    format!(
        r#"	AnimationCurveNode: {node}, "AnimCurveNode::{what}", "" {{
		Properties70:  {{
			P: "d|X", "Number", "", "A",{rest}
			P: "d|Y", "Number", "", "A",0
			P: "d|Z", "Number", "", "A",0
		}}
	}}
	AnimationCurve: {id}, "AnimCurve::", "" {{
		Default: {a}
		KeyVer: 4008
		KeyTime: *2 {{
			a: 0,{SECOND}
		}}
		KeyValueFloat: *2 {{
			a: {a},{b}
		}}
		KeyAttrFlags: *1 {{
			a: 260
		}}
		KeyAttrDataFloat: *4 {{
			a: 0,0,0,0
		}}
		KeyAttrRefCount: *1 {{
			a: 2
		}}
	}}
"#
    )
}
